// The study's report: one self-contained HTML page (inline SVG, readable
// offline) of a study's result (study.h) and the claims judged on it
// (study_claims.h).
#pragma once

#include <string>

#include "piranha/scheduler/study.h"
#include "piranha/scheduler/study_claims.h"

namespace piranha::sched {

// The whole page: the trace, Figures 1–3, Figures 5–7, the claims with their
// verdicts, the §6.1 example, the comparison beyond the paper and the
// timings. `claims` is judge(result). `discussion_html`, if not empty, is a
// hand-written HTML fragment placed, unescaped, in a closing "Discussion"
// section (why the findings differ from the paper's). Requires a non-empty
// result.prediction. Pure: the same arguments give the same bytes.
std::string render_study_report(const StudyResult& result, const StudyClaims& claims,
                                const std::string& discussion_html = {});

}  // namespace piranha::sched

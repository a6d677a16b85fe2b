#include "piranha/scheduler/csv_lines.h"

#include <utility>

#include "piranha/scheduler/csv.h"

namespace piranha::csv {

CsvLines::CsvLines(std::istream& in, std::string source, Comments comments)
    : in_(in), source_(std::move(source)), comments_(comments) {}

bool CsvLines::next() {
  while (std::getline(in_, raw_)) {
    ++line_;
    text_ = trim(raw_);
    if (text_.empty()) continue;
    if (comments_ == Comments::Skip && is_comment()) continue;
    return true;
  }
  raw_.clear();
  text_.clear();
  return false;
}

std::vector<std::string> CsvLines::cells() const {
  return split(text_);
}

void CsvLines::fail(const std::string& problem) const {
  throw InputError(source_, line_, problem);
}

void CsvLines::fail_at(int line, const std::string& problem) const {
  throw InputError(source_, line, problem);
}

}  // namespace piranha::csv

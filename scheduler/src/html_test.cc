// The charts' layouts: every text has room of its own, within the chart.
#include "piranha/scheduler/html.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

namespace piranha::sched::html {
namespace {

// The first two texts whose boxes overlap, or one outside the chart; "" when none.
std::string crowded(const ChartLayout& f) {
  for (std::size_t i = 0; i < f.texts.size(); ++i) {
    const Box a = f.texts[i].box();
    if (a.x0 < 0 || a.y0 < 0 || a.x1 > f.w || a.y1 > f.h)
      return "\"" + f.texts[i].text + "\" leaves the chart";
    for (std::size_t j = i + 1; j < f.texts.size(); ++j)
      if (overlap(a, f.texts[j].box()))
        return "\"" + f.texts[i].text + "\" overlaps \"" + f.texts[j].text + "\"";
  }
  return "";
}

std::vector<std::pair<std::string, double>> rigid_run() {
  // `piranha sim rigid --report`'s makespans: long names, values in the millions of seconds.
  return {{"FIFO", 12482549},          {"FirstFit", 11904231},      {"Random", 12003387},
          {"LPT", 12620114},           {"SPT", 12380119},           {"Backfill", 11890002},
          {"EASY-backfill", 11870553}, {"PFCFS1(600,60)", 11999999}};
}

}  // namespace

TEST_CASE("a bar chart's values and names never overlap, however long or large") {
  const ChartLayout f = bar_chart_layout({"Makespan", "", "seconds"}, rigid_run());
  CHECK(crowded(f) == "");
  std::size_t turned = 0, values = 0;
  for (const auto& t : f.texts) {
    turned += t.turned && t.text != "seconds";
    values += t.text == "12.48M";
  }
  CHECK(turned == 8);  // "EASY-backfill" is wider than its slot: every name stands upright
  CHECK(values == 1);
  // Short names and small values (the NPS's report): names stay level.
  const ChartLayout small =
      bar_chart_layout({"Mean turnaround normalized by TSK", "", "normalized turnaround"},
                       {{"TSK", 1.0}, {"SRT", 0.93}, {"FAIR", 1.21}, {"RND", 1.4}}, 1.0);
  CHECK(crowded(small) == "");
  for (const auto& t : small.texts) CHECK_FALSE((t.turned && t.text == "SRT"));
  // Many bars, an x-axis title.
  std::vector<std::pair<std::string, double>> many;
  for (int i = 0; i < 40; ++i) many.push_back({"node ws" + std::to_string(i), 1000.0 * i * i});
  CHECK(crowded(bar_chart_layout({"APs", "length (min)", "APs"}, many)) == "");
}

TEST_CASE("a line chart's legend, ticks and titles never overlap") {
  std::vector<Series> series;
  for (const char* name : {"Greedy", "MR(4)", "MR(4,CONS,COMPLETION)", "MR(4,CONS,COMPLETION,EFFICACY)"})
    series.push_back({name, {{1.0, 15.0}, {1.4, 30.0}, {1.8, 44.0}}});
  const ChartLayout f =
      line_chart_layout({"Average turnaround time, four sites", "load factor", "hours"}, series);
  CHECK(crowded(f) == "");
  // Twenty series, a long title, x values that need thinning, y values in the millions.
  std::vector<Series> many;
  for (int i = 0; i < 20; ++i)
    many.push_back({"series " + std::to_string(i), {{0, 1e6 * i}, {1.6e7, 2e6 * i}}});
  // (x ticks every 2,000,000 s are 51 px apart: "16000000" needs more, so every other one goes.)
  const ChartLayout thinned = line_chart_layout({std::string(70, 'T'), "time (s)", "bytes"}, many);
  CHECK(crowded(thinned) == "");
  bool has_4m = false, has_2m = false;
  for (const auto& t : thinned.texts) has_4m |= t.text == "4000000", has_2m |= t.text == "2000000";
  CHECK(has_4m);
  CHECK_FALSE(has_2m);
}

TEST_CASE("tick labels have the decimals their step needs, and bar values a unit that fits") {
  std::vector<Series> delay = {{"MTI", {{0.25, 0.0}, {0.75, 0.0165}}}};
  std::vector<std::string> ys;
  const ChartLayout f = line_chart_layout({"Average delay", "load factor", "hours"}, delay);
  for (const auto& t : f.texts)
    if (t.anchor == ChartText::Anchor::End && !t.turned) ys.push_back(t.text);
  // Not 0.00, 0.01, 0.01, 0.01, 0.02.
  CHECK(ys == std::vector<std::string>{"0.000", "0.005", "0.010", "0.015", "0.020"});
  CHECK(bar_value(0.934) == "0.93");
  CHECK(bar_value(12345) == "12.3k");
  CHECK(bar_value(12482549) == "12.48M");
  CHECK(bar_value(3.1e9) == "3.10G");
  // What is laid out is what is drawn.
  const std::string svg = bar_chart({"Makespan", "", "seconds"}, rigid_run());
  CHECK(svg.find(">12.48M</text>") != std::string::npos);
  CHECK(svg.find("rotate(-90)\" text-anchor=\"end\" class=\"s\">EASY-backfill</text>") != std::string::npos);
}

}  // namespace piranha::sched::html

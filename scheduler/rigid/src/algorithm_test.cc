#include "piranha/rigid/algorithm.h"

#include <doctest/doctest.h>

namespace piranha::rigid {

TEST_CASE("algorithm names: case-insensitive, canonical with every parameter") {
  CHECK(make_algorithm("fcfs")->name() == "FIFO");
  CHECK(make_algorithm("firstfit")->name() == "FirstFit");
  CHECK(make_algorithm("CONS")->name() == "Conservative");
  CHECK(make_algorithm("pfcfs1")->name() == "PFCFS1(600,600,0)");
  CHECK(make_algorithm("PFCFS2")->name() == "PFCFS2(60,60,0)");
  CHECK(make_algorithm("PFCFS3(30,2)")->name() == "PFCFS3(30,2)");
  CHECK(make_algorithm("Greedy")->name() == "Greedy");
  CHECK(make_algorithm("mr(2)")->name() == "MR(2,EASY,START,FCFS,LOAD)");
  CHECK(make_algorithm("MR(3,cons,completion,efficacy,completion)")->name() ==
        "MR(3,CONS,COMPLETION,EFFICACY,COMPLETION)");
  CHECK(make_algorithm("mti")->name() == "MTI");
}

TEST_CASE("MR(all) is printed as such whatever the machine, MR(0) being the same") {
  CHECK(make_algorithm("MR(all)")->name() == "MR(all,EASY,START,FCFS,LOAD)");
  CHECK(make_algorithm("mr(0,cons,completion)")->name() == "MR(all,CONS,COMPLETION,FCFS,LOAD)");
  CHECK_THROWS_WITH(make_algorithm("MR(-1)"), "algorithm \"MR(-1)\": K \"-1\" is not a whole number >= 0");
}

TEST_CASE("bad algorithm names and parameters say what is wrong") {
  CHECK_THROWS_AS(make_algorithm("SJF"), InputError);
  CHECK_THROWS_WITH(make_algorithm("FIFO(3)"), "algorithm \"FIFO(3)\": FIFO takes no parameters");
  CHECK_THROWS_WITH(make_algorithm("PFCFS1(x)"),
                    "algorithm \"PFCFS1(x)\": wait \"X\" is not a whole number >= 0");
  CHECK_THROWS_WITH(make_algorithm("PFCFS1(1,0)"),
                    "algorithm \"PFCFS1(1,0)\": slice \"0\" is not a whole number >= 1");
  CHECK_THROWS_AS(make_algorithm("PFCFS3(1,2,3)"), InputError);
  CHECK_THROWS_WITH(make_algorithm("PFCFS1(0,60,60)"),
                    "algorithm \"PFCFS1(0,60,60)\": PFCFS1's penalty must be shorter than its slice");
  CHECK_NOTHROW(make_algorithm("PFCFS2(0,60,60)"));
  CHECK_THROWS_WITH(make_algorithm("MR(2,EASY,COMPLETION)"),
                    "algorithm \"MR(2,EASY,COMPLETION)\": completion-based decisions need CONS");
  CHECK_THROWS_WITH(make_algorithm("MR(2,FAST)"),
                    "algorithm \"MR(2,FAST)\": \"FAST\" is neither EASY nor CONS");
  CHECK_THROWS_AS(make_algorithm("MR"), InputError);
  CHECK_THROWS_AS(make_algorithm("EASY("), InputError);
}

TEST_CASE("single-site algorithms refuse several sites, the others take any") {
  const auto two = parse_sites("4,4");
  CHECK_THROWS_WITH_AS(make_algorithm("EASY")->check(two),
                       "algorithm \"EASY\": schedules one site; --sites gives 2", InputError);
  CHECK_THROWS_AS(make_algorithm("PFCFS1")->check(two), InputError);
  CHECK_NOTHROW(make_algorithm("Greedy")->check(two));
  CHECK_NOTHROW(make_algorithm("MTI")->check(two));
  CHECK_NOTHROW(make_algorithm("EASY")->check(single_site(4)));
}

}  // namespace piranha::rigid

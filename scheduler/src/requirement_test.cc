#include "piranha/scheduler/requirement.h"

#include <doctest/doctest.h>

#include <string>
#include <vector>

using namespace piranha::sched;
using piranha::InputError;

namespace {

NodeAttributes node(std::int64_t cores, std::int64_t memory, std::string arch,
                    std::vector<std::string> labels) {
  return NodeAttributes{cores, memory, std::move(arch), normalize_labels(std::move(labels), "test")};
}

constexpr std::int64_t kG = std::int64_t{1} << 30;

// What parse_requirement throws for `text`, without the source.
std::string requirement_error(const std::string& text) {
  try {
    parse_requirement(text);
  } catch (const InputError& e) {
    CHECK(e.source() == "--require");
    return e.message();
  }
  return "(parsed)";
}

}  // namespace

TEST_CASE("a requirement parses clause by clause into its canonical text") {
  const Requirement r =
      parse_requirement(" cores >= 4 , memory>=8192M,arch=x86_64,label=gpu,label = fast-disk ");
  REQUIRE(r.clauses.size() == 5);
  CHECK(r.clauses[0] == Clause{Clause::Kind::Cores, 4, ""});
  CHECK(r.clauses[1] == Clause{Clause::Kind::Memory, 8 * kG, ""});
  CHECK(r.clauses[2] == Clause{Clause::Kind::Arch, 0, "x86_64"});
  CHECK(r.clauses[4] == Clause{Clause::Kind::Label, 0, "fast-disk"});
  CHECK(r.text() == "cores>=4,memory>=8G,arch=x86_64,label=gpu,label=fast-disk");
  CHECK(parse_requirement(r.text()) == r);
  CHECK(parse_requirement("memory>=1536M").clauses[0].at_least == 1536 * (std::int64_t{1} << 20));
  CHECK(parse_requirement("memory>=3K").text() == "memory>=3K");
  CHECK(parse_requirement("memory>=100").text() == "memory>=100");
  CHECK(parse_requirement("").empty());
  CHECK(parse_requirement("   ").empty());
}

TEST_CASE("bad requirement text is an InputError naming the column, the clause and the problem") {
  CHECK(requirement_error("cores>=2, memory>=8X") ==
        "column 20, in clause 2 \"memory>=8X\": size \"8X\" has an unknown suffix 'X' (expected K, M or G)");
  CHECK(requirement_error("gpu") ==
        "column 1, in clause 1 \"gpu\": unknown attribute \"gpu\" (expected cores, memory, "
        "arch or label)");
  CHECK(requirement_error("label>=gpu") ==
        "column 6, in clause 1 \"label>=gpu\": label takes \"=\", got \">=\"");
  CHECK(requirement_error("cores=4") == "column 6, in clause 1 \"cores=4\": cores takes \">=\", got \"=\"");
  CHECK(requirement_error("cores>=") ==
        "column 8, in clause 1 \"cores>=\": cores needs a value after \">=\"");
  CHECK(requirement_error("cores>=0") ==
        "column 8, in clause 1 \"cores>=0\": count must be at least 1, got \"0\"");
  CHECK(requirement_error("cores>=4G") ==
        "column 9, in clause 1 \"cores>=4G\": count \"4G\" has trailing text \"G\"");
  CHECK(requirement_error("memory>=big") ==
        "column 9, in clause 1 \"memory>=big\": size \"big\" is not a number (e.g. 512M, 8G)");
  CHECK(requirement_error("memory>=99999999999G") ==
        "column 9, in clause 1 \"memory>=99999999999G\": size \"99999999999G\" is too large");
  CHECK(requirement_error("label=gpu,,arch=x86_64") ==
        "column 11, in clause 2 \"\": empty clause (two commas, or a comma at an end)");
  CHECK(requirement_error("label=gpu,") ==
        "column 11, in clause 2 \"\": empty clause (two commas, or a comma at an end)");
  CHECK(requirement_error("label=g p u") ==
        "column 7, in clause 1 \"label=g p u\": label \"g p u\" is not a name (1 to 64 letters, digits, '_', "
        "'-' or '.')");
  CHECK_THROWS_WITH_AS(parse_requirement("arch=", "jobreq"),
                       "jobreq: column 6, in clause 1 \"arch=\": arch needs a value after \"=\"", InputError);
}

TEST_CASE("the matcher names the first clause a node does not satisfy") {
  const NodeAttributes big = node(16, 64 * kG, "x86_64", {"gpu", "fast-disk", "gpu"});
  const NodeAttributes small = node(2, 4 * kG, "aarch64", {});
  CHECK(big.labels == std::vector<std::string>{"fast-disk", "gpu"});
  const Requirement r = parse_requirement("memory>=8G,label=gpu");
  CHECK(satisfies(r, big));
  CHECK_FALSE(first_unmet(r, big));
  CHECK(first_unmet(r, small) == "memory>=8G: it has 4G");
  CHECK(first_unmet(parse_requirement("label=gpu"), small) == "label=gpu: it has no label gpu");
  CHECK(first_unmet(parse_requirement("cores>=4"), small) == "cores>=4: it has 2 cores");
  CHECK(first_unmet(parse_requirement("arch=x86_64"), small) == "arch=x86_64: it is aarch64");
  CHECK(first_unmet(parse_requirement("arch=x86_64"), NodeAttributes{}) ==
        "arch=x86_64: it is of an unknown architecture");
  CHECK(satisfies(parse_requirement("cores>=16,memory>=64G,arch=x86_64,label=fast-disk"), big));
  CHECK_FALSE(satisfies(parse_requirement("cores>=17"), big));
  // The empty requirement: every node, even one that published nothing.
  CHECK(satisfies(Requirement{}, NodeAttributes{}));
  // A stored text that does not parse: no node, and the reason says why.
  const Requirement bad = read_requirement("label=gpu,colour=red");
  CHECK_FALSE(satisfies(bad, big));
  CHECK(first_unmet(bad, big)->find("the requirement is unreadable: \"label=gpu,colour=red\": column 11") ==
        0);
  CHECK(read_requirement("label=gpu") == parse_requirement("label=gpu"));
}

TEST_CASE("why no node: the first clause no node meets, else the combination") {
  const std::vector<NodeAttributes> pool{node(8, 4 * kG, "x86_64", {"gpu"}), node(2, 32 * kG, "x86_64", {})};
  CHECK_FALSE(why_no_node(parse_requirement("label=gpu"), pool));
  CHECK(why_no_node(parse_requirement("memory>=8G,label=tpu"), pool) == "no node has label=tpu");
  CHECK(why_no_node(parse_requirement("memory>=8G,label=gpu"), pool) ==
        "no node has all of memory>=8G,label=gpu");
  CHECK(why_no_node(parse_requirement("label=gpu"), {}) == "no node has label=gpu");
  CHECK_FALSE(why_no_node(Requirement{}, pool));
}

TEST_CASE("eligibility groups equal nodes and is absent without requirements") {
  const std::vector<NodeAttributes> nodes{node(4, kG, "x86_64", {"gpu"}), node(4, kG, "x86_64", {}),
                                          node(4, kG, "x86_64", {"gpu"})};
  const Requirement none, gpu = parse_requirement("label=gpu"), tpu = parse_requirement("label=tpu");
  const std::vector<const Requirement*> plain{&none, nullptr};
  CHECK_FALSE(make_eligibility(nodes, plain));
  const std::vector<const Requirement*> jobs{&none, &gpu, &tpu};
  const auto e = make_eligibility(nodes, jobs);
  REQUIRE(e);
  CHECK(e->groups() == 2);
  CHECK(e->group(0) == e->group(2));
  CHECK(e->group(0) != e->group(1));
  for (std::size_t n = 0; n < 3; ++n) {
    CHECK(e->allows(n, 0));
    CHECK(e->allows(n, 1) == (n != 1));
    CHECK_FALSE(e->allows(n, 2));
  }
}

TEST_CASE("sizes are shown in the largest unit that divides them") {
  CHECK(format_size(16 * kG) == "16G");
  CHECK(format_size(1536LL << 20) == "1536M");
  CHECK(format_size(2048) == "2K");
  CHECK(format_size(1000) == "1000");
  CHECK(format_size(0) == "0");
}

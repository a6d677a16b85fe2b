#include "piranha/base/input_error.h"

#include <doctest/doctest.h>

#include <string>

using piranha::InputError;

TEST_CASE("input error: what() is SOURCE:LINE: message, and the parts are kept") {
  const InputError e("agent.yaml", 7, "unknown key 'laod' in availability");
  CHECK(std::string(e.what()) == "agent.yaml:7: unknown key 'laod' in availability");
  CHECK(e.source() == "agent.yaml");
  CHECK(e.line() == 7);
  CHECK(e.message() == "unknown key 'laod' in availability");
}

TEST_CASE("input error: without a line, what() is SOURCE: message") {
  const InputError whole("jobs.csv", "cannot open the job file");
  CHECK(std::string(whole.what()) == "jobs.csv: cannot open the job file");
  CHECK(whole.line() == 0);
  CHECK(whole.message() == "cannot open the job file");
  // Line 0 means the same as no line.
  CHECK(std::string(InputError("--strategy", 0, "unknown strategy").what()) ==
        "--strategy: unknown strategy");
}

TEST_CASE("input error: caught as a std::runtime_error, what() unchanged") {
  try {
    throw InputError("<stdin>", 3, "not a number");
  } catch (const std::runtime_error& e) {
    CHECK(std::string(e.what()) == "<stdin>:3: not a number");
  }
}

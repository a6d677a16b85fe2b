#include "piranha/agent/launch_policy.h"

#include <doctest/doctest.h>

#include <string>

#include "piranha/agent/agent_config.h"

using namespace piranha;

TEST_CASE("launch policy: SHA-256 gives FIPS 180-4's digests") {
  CHECK(sha256_hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  CHECK(sha256_hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  // Two blocks: the padding spills into a second one.
  CHECK(sha256_hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq") ==
        "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  CHECK(sha256_hex(std::string(1000000, 'a')) ==
        "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
}

TEST_CASE("launch policy: a program outside the allowed ones is refused, and the reason says which") {
  LaunchPolicy p;
  CHECK_FALSE(launch_refusal(p, "/bin/sh", std::nullopt));  // no list: any program
  p.programs = {"/opt/jobs/", "/usr/local/bin/sim"};
  CHECK_FALSE(launch_refusal(p, "/opt/jobs/cmatrix", std::nullopt));
  CHECK_FALSE(launch_refusal(p, "/opt/jobs/lab/spin", std::nullopt));
  CHECK_FALSE(launch_refusal(p, "/usr/local/bin/sim", std::nullopt));
  CHECK(
      launch_refusal(p, "/bin/sh", std::nullopt) ==
      "/bin/sh is not among this node's allowed programs (piranha_programs: /opt/jobs/, /usr/local/bin/sim)");
  CHECK(launch_refusal(p, "/opt/jobsX/evil", std::nullopt));      // not under the directory
  CHECK(launch_refusal(p, "/usr/local/bin/sim2", std::nullopt));  // a file is that file only
}

TEST_CASE("launch policy: with checksums, a program must have one of them") {
  LaunchPolicy p;
  p.sha256 = {sha256_hex("good")};
  CHECK_FALSE(launch_refusal(p, "/opt/jobs/a", sha256_hex("good")));
  CHECK(launch_refusal(p, "/opt/jobs/a", sha256_hex("bad")) ==
        "/opt/jobs/a's SHA-256 " + sha256_hex("bad") +
            " is not among this node's allowed checksums (piranha_sha256)");
  CHECK(launch_refusal(p, "/opt/jobs/a", std::nullopt));
}

TEST_CASE("launch policy: read from the agent's YAML strictly") {
  AgentConfig c = parse_agent_config(
      "piranha_user: nobody\n"
      "piranha_programs: [/usr/bin, /usr/local/bin/]\n"
      "piranha_sha256: [BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD]\n"
      "piranha_limits: {address_space_mb: 4096, cpu_seconds: 60, open_files: 256}\n",
      "agent.yaml");
  CHECK(c.launch.user == "nobody");
  REQUIRE(c.launch.programs.size() == 2);
  CHECK(c.launch.programs[0] == "/usr/bin/");  // an existing directory, though written without '/'
  CHECK(c.launch.sha256 == std::vector<std::string>{sha256_hex("abc")});
  CHECK(c.launch.limits.address_space_mb == 4096);
  CHECK(c.launch.limits.cpu_seconds == 60);
  CHECK(c.launch.limits.open_files == 256);
  CHECK_THROWS_WITH_AS(parse_agent_config("piranha_programs: [bin/]\n", "agent.yaml"),
                       doctest::Contains("is not an absolute path"), InputError);
  CHECK_THROWS_WITH_AS(parse_agent_config("piranha_sha256: [abc]\n", "agent.yaml"),
                       doctest::Contains("is not a SHA-256 digest"), InputError);
  CHECK_THROWS_WITH_AS(parse_agent_config("piranha_limits: {open_files: 0}\n", "agent.yaml"),
                       doctest::Contains("piranha_limits.open_files"), InputError);
  CHECK_THROWS_AS(parse_agent_config("piranha_limits: {stack_mb: 8}\n", "agent.yaml"), InputError);
}

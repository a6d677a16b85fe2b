// Runs `piranha ts bench --quick --json` and checks the report has every
// figure with a sane value. No speed is asserted: machines are shared.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

namespace {

using nlohmann::json;

bool have_redis() {
  for (const char* dir : {"/usr/bin", "/usr/local/bin", "/usr/sbin"})
    if (::access((std::string(dir) + "/redis-server").c_str(), X_OK) == 0) return true;
  return std::system("command -v redis-server >/dev/null 2>&1") == 0;
}

// Runs the benchmark; returns its stdout, checks it exits 0.
std::string run(const std::string& args) {
  std::string cmd = std::string(PIRANHA_BIN_DIR) + "/piranha ts bench --quick --json " + args;
  FILE* p = ::popen(cmd.c_str(), "r");
  REQUIRE(p != nullptr);
  std::string out;
  char buf[4096];
  while (std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  int status = ::pclose(p);
  INFO("command: " << cmd);
  INFO("stdout: " << out);
  REQUIRE(WIFEXITED(status));
  REQUIRE(WEXITSTATUS(status) == 0);
  return out;
}

const char* kTupleSpaceFigures[] = {"rtt_us_p50",
                                    "rtt_us_p99",
                                    "zmq_rtt_us_p50",
                                    "zmq_rtt_us_p99",
                                    "zmq_pair_us_p50",
                                    "zmq_farm_tasks_per_s",
                                    "zmq_farm2_tasks_per_s",
                                    "zmq_farm_cpu_us_per_task",
                                    "farm_vs_zmq_farm",
                                    "farm_tasks_per_s",
                                    "farm2_tasks_per_s",
                                    "bulk_out_per_s",
                                    "in_us_p50_empty",
                                    "in_us_p50_1m",
                                    "payload_bytes_per_tuple",
                                    "rss_bytes_per_tuple",
                                    "in_1m_vs_empty",
                                    "out_us_p50",
                                    "in_us_p50",
                                    "rtt_server_cpu_us",
                                    "rtt_client_cpu_us",
                                    "farm_cpu_us_per_task",
                                    "durable_bulk_out_per_s_always",
                                    "durable_bulk_out_per_s_everysec",
                                    "durable_farm2_tasks_per_s_always",
                                    "durable_farm2_tasks_per_s_everysec"};
const char* kRedisFigures[] = {"redis_rtt_us_p50",
                               "redis_rtt_us_p99",
                               "redis_farm_tasks_per_s",
                               "redis_farm2_tasks_per_s",
                               "redis_pipelined_per_s",
                               "farm_vs_redis",
                               "farm2_vs_redis",
                               "rtt_vs_redis",
                               "redis_lpush_batch_per_s",
                               "redis_rss_bytes_per_item",
                               "redis_aof_pipelined_per_s_always",
                               "redis_aof_pipelined_per_s_everysec",
                               "redis_aof_farm2_tasks_per_s_always",
                               "redis_aof_farm2_tasks_per_s_everysec",
                               "durable_farm2_vs_redis_aof_always",
                               "durable_farm2_vs_redis_aof_everysec"};
const char* kTargets[] = {"farm_vs_redis_ge_1",
                          "farm2_vs_redis_ge_1",
                          "rtt_vs_redis_le_1_5",
                          "in_1m_vs_empty_le_1_25",
                          "bytes_per_tuple_lt_100",
                          "durable_farm2_vs_redis_aof_always_ge_1",
                          "durable_farm2_vs_redis_aof_everysec_ge_1"};

void check_positive(const json& r, const char* key) {
  INFO("key: " << key);
  REQUIRE(r.contains(key));
  REQUIRE(r[key].is_number());
  CHECK(r[key].get<double>() > 0);
}

void check_tuple_space(const json& r) {
  for (const char* key : kTupleSpaceFigures) check_positive(r, key);
  CHECK(r["rtt_us_p99"].get<double>() >= r["rtt_us_p50"].get<double>());
  CHECK(r["zmq_rtt_us_p99"].get<double>() >= r["zmq_rtt_us_p50"].get<double>());
  CHECK(r["in_us_p99_empty"].get<double>() >= r["in_us_p50_empty"].get<double>());
  CHECK(r["in_us_p99_1m"].get<double>() >= r["in_us_p50_1m"].get<double>());
  // Overhead may be anything (RSS is page-grained) but must be consistent.
  REQUIRE(r["bytes_per_tuple"].is_number());
  CHECK(r["bytes_per_tuple"].get<double>() ==
        doctest::Approx(r["rss_bytes_per_tuple"].get<double>() - r["payload_bytes_per_tuple"].get<double>())
            .epsilon(0.01));
  // ("filler", i, blob(8)) is 21 to 24 canonical bytes.
  CHECK(r["payload_bytes_per_tuple"].get<double>() >= 21);
  CHECK(r["payload_bytes_per_tuple"].get<double>() <= 24);
  REQUIRE(r.contains("targets"));
  for (const char* t : kTargets) {
    INFO("target: " << t);
    CHECK(r["targets"].contains(t));
  }
  CHECK(r["targets"]["in_1m_vs_empty_le_1_25"].is_boolean());
  CHECK(r["targets"]["bytes_per_tuple_lt_100"].is_boolean());
}

}  // namespace

TEST_CASE("quick benchmark reports every figure") {
  bool redis = have_redis();
  json r = json::parse(run(redis ? "" : "--no-redis"));
  REQUIRE(r.is_object());
  check_tuple_space(r);
  if (!redis) {
    MESSAGE("redis-server not installed: Redis figures not checked");
    return;
  }
  for (const char* key : kRedisFigures) check_positive(r, key);
  CHECK(r["redis_rtt_us_p99"].get<double>() >= r["redis_rtt_us_p50"].get<double>());
  for (const char* t : kTargets) {
    INFO("target: " << t);
    CHECK(r["targets"][t].is_boolean());
  }
}

const char* kCurveFigures[] = {"curve_rtt_us_p50",
                               "curve_rtt_us_p99",
                               "curve_rtt_server_cpu_us",
                               "curve_rtt_client_cpu_us",
                               "curve_farm_tasks_per_s",
                               "curve_farm2_tasks_per_s",
                               "curve_farm_cpu_us_per_task",
                               "curve_farm2_cpu_us_per_task",
                               "curve_rtt_vs_plain",
                               "curve_farm_vs_plain",
                               "curve_farm2_vs_plain",
                               "curve_plain_rtt_us_p50",
                               "curve_plain_rtt_us_p99",
                               "curve_plain_farm_tasks_per_s",
                               "curve_plain_farm2_tasks_per_s",
                               "curve_plain_rtt_server_cpu_us",
                               "curve_plain_farm_cpu_us_per_task"};

TEST_CASE("--curve measures the round trip and the farms with CURVE too, and without it they are null") {
  json r = json::parse(run("--no-redis --curve --tasks 100 --samples 100"));
  check_tuple_space(r);
  for (const char* key : kCurveFigures) check_positive(r, key);
  CHECK(r["curve_rtt_us_p99"].get<double>() >= r["curve_rtt_us_p50"].get<double>());
  json plain = json::parse(run("--no-redis --tasks 100 --samples 100"));
  for (const char* key : kCurveFigures) {
    INFO("key: " << key);
    CHECK(plain[key].is_null());
  }
}

TEST_CASE("--no-redis leaves the Redis figures null and says so") {
  json r = json::parse(run("--no-redis --tasks 100 --samples 100"));
  check_tuple_space(r);
  for (const char* key : kRedisFigures) {
    INFO("key: " << key);
    REQUIRE(r.contains(key));
    CHECK(r[key].is_null());
  }
  CHECK(r["targets"]["farm_vs_redis_ge_1"].is_null());
  REQUIRE(r["notes"].is_array());
  CHECK(r["notes"][0].get<std::string>().find("--no-redis") != std::string::npos);
}

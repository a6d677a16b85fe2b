#include "report.h"

#include <cmath>
#include <iomanip>
#include <sstream>

namespace piranha::bench {
namespace {

using nlohmann::json;

// Figures are rounded for reading; the noise is far above the dropped digits.
json round_to(double v, int digits) {
  double scale = std::pow(10.0, digits);
  return std::round(v * scale) / scale;
}
json us(double v) {
  return round_to(v, 2);
}
json rate(double v) {
  return std::round(v);
}
json ratio(double a, double b) {
  return b > 0 ? round_to(a / b, 3) : json(nullptr);
}

// True/false when both sides were measured, null otherwise.
json target(const json& value, bool (*met)(double)) {
  if (value.is_null()) return nullptr;
  return met(value.get<double>());
}

}  // namespace

json make_report(const Figures& f) {
  json r;
  const auto& t = f.ts;
  const auto& m = f.memory;
  r["rtt_us_p50"] = us(t.rtt.p50);
  r["rtt_us_p99"] = us(t.rtt.p99);
  r["out_us_p50"] = us(t.out.p50);
  r["in_us_p50"] = us(t.in.p50);
  r["zmq_rtt_us_p50"] = us(f.zmq.rtt.p50);
  r["zmq_rtt_us_p99"] = us(f.zmq.rtt.p99);
  r["zmq_pair_us_p50"] = us(f.zmq.pair.p50);
  r["zmq_server_cpu_us"] = us(f.zmq.cpu.server_us);
  r["zmq_client_cpu_us"] = us(f.zmq.cpu.client_us);
  r["zmq_farm_tasks_per_s"] = rate(f.zmq.farm_per_s[0]);
  r["zmq_farm2_tasks_per_s"] = rate(f.zmq.farm_per_s[1]);
  r["zmq_farm_cpu_us_per_task"] = us(f.zmq.farm_cpu_us[0]);
  r["zmq_farm2_cpu_us_per_task"] = us(f.zmq.farm_cpu_us[1]);
  r["rtt_server_cpu_us"] = us(t.rtt_cpu.server_us);
  r["rtt_client_cpu_us"] = us(t.rtt_cpu.client_us);
  r["farm_cpu_us_per_task"] = us(t.farm_cpu_us[0]);
  r["farm2_cpu_us_per_task"] = us(t.farm_cpu_us[1]);
  r["farm_tasks_per_s"] = rate(t.farm_per_s[0]);
  r["farm2_tasks_per_s"] = rate(t.farm_per_s[1]);
  r["bulk_out_per_s"] = rate(t.bulk_out_per_s);
  r["in_us_p50_empty"] = us(m.in_empty.p50);
  r["in_us_p99_empty"] = us(m.in_empty.p99);
  r["in_us_p50_1m"] = us(m.in_full.p50);
  r["in_us_p99_1m"] = us(m.in_full.p99);
  r["rss_bytes_per_tuple"] = round_to(m.rss_bytes_per_tuple, 1);
  r["payload_bytes_per_tuple"] = round_to(m.payload_bytes_per_tuple, 1);
  r["bytes_per_tuple"] = round_to(m.rss_bytes_per_tuple - m.payload_bytes_per_tuple, 1);
  r["filler_load_per_s"] = rate(m.load_per_s);

  // With CURVE and the access policy, and a plain server measured in turns with it.
  const auto& cv = f.curve;
  auto curve = [&](const char* key, auto value) { r[key] = cv ? json(value(*cv)) : json(nullptr); };
  curve("curve_rtt_us_p50", [](const CurveFigures& c) { return us(c.rtt.p50); });
  curve("curve_rtt_us_p99", [](const CurveFigures& c) { return us(c.rtt.p99); });
  curve("curve_rtt_server_cpu_us", [](const CurveFigures& c) { return us(c.rtt_cpu.server_us); });
  curve("curve_rtt_client_cpu_us", [](const CurveFigures& c) { return us(c.rtt_cpu.client_us); });
  curve("curve_farm_tasks_per_s", [](const CurveFigures& c) { return rate(c.farm_per_s[0]); });
  curve("curve_farm2_tasks_per_s", [](const CurveFigures& c) { return rate(c.farm_per_s[1]); });
  curve("curve_farm_cpu_us_per_task", [](const CurveFigures& c) { return us(c.farm_cpu_us[0]); });
  curve("curve_farm2_cpu_us_per_task", [](const CurveFigures& c) { return us(c.farm_cpu_us[1]); });
  curve("curve_plain_rtt_us_p50", [](const CurveFigures& c) { return us(c.plain_rtt.p50); });
  curve("curve_plain_rtt_us_p99", [](const CurveFigures& c) { return us(c.plain_rtt.p99); });
  curve("curve_plain_rtt_server_cpu_us", [](const CurveFigures& c) { return us(c.plain_rtt_cpu.server_us); });
  curve("curve_plain_rtt_client_cpu_us", [](const CurveFigures& c) { return us(c.plain_rtt_cpu.client_us); });
  curve("curve_plain_farm_tasks_per_s", [](const CurveFigures& c) { return rate(c.plain_farm_per_s[0]); });
  curve("curve_plain_farm2_tasks_per_s", [](const CurveFigures& c) { return rate(c.plain_farm_per_s[1]); });
  curve("curve_plain_farm_cpu_us_per_task", [](const CurveFigures& c) { return us(c.plain_farm_cpu_us[0]); });
  curve("curve_plain_farm2_cpu_us_per_task",
        [](const CurveFigures& c) { return us(c.plain_farm_cpu_us[1]); });
  curve("curve_rtt_vs_plain", [](const CurveFigures& c) { return ratio(c.rtt.p50, c.plain_rtt.p50); });
  curve("curve_farm_vs_plain",
        [](const CurveFigures& c) { return ratio(c.farm_per_s[0], c.plain_farm_per_s[0]); });
  curve("curve_farm2_vs_plain",
        [](const CurveFigures& c) { return ratio(c.farm_per_s[1], c.plain_farm_per_s[1]); });

  const auto& rd = f.redis;
  r["redis_rtt_us_p50"] = rd ? us(rd->rtt.p50) : json(nullptr);
  r["redis_rtt_us_p99"] = rd ? us(rd->rtt.p99) : json(nullptr);
  r["redis_rtt_unpipelined_us_p50"] = rd ? us(rd->rtt_unpipelined.p50) : json(nullptr);
  r["redis_rtt_unpipelined_us_p99"] = rd ? us(rd->rtt_unpipelined.p99) : json(nullptr);
  r["redis_farm_tasks_per_s"] = rd ? rate(rd->farm_per_s[0]) : json(nullptr);
  r["redis_farm2_tasks_per_s"] = rd ? rate(rd->farm_per_s[1]) : json(nullptr);
  r["redis_rtt_server_cpu_us"] = rd ? us(rd->rtt_cpu.server_us) : json(nullptr);
  r["redis_rtt_client_cpu_us"] = rd ? us(rd->rtt_cpu.client_us) : json(nullptr);
  r["redis_farm_cpu_us_per_task"] = rd ? us(rd->farm_cpu_us[0]) : json(nullptr);
  r["redis_farm2_cpu_us_per_task"] = rd ? us(rd->farm_cpu_us[1]) : json(nullptr);
  r["redis_pipelined_per_s"] = rd ? rate(rd->pipelined_per_s) : json(nullptr);
  r["redis_lpush_batch_per_s"] = rd ? rate(rd->lpush_batch_per_s) : json(nullptr);
  r["redis_rss_bytes_per_item"] = rd ? round_to(rd->rss_bytes_per_item, 1) : json(nullptr);

  r["farm_vs_redis"] = rd ? ratio(t.farm_per_s[0], rd->farm_per_s[0]) : json(nullptr);
  r["farm2_vs_redis"] = rd ? ratio(t.farm_per_s[1], rd->farm_per_s[1]) : json(nullptr);
  r["rtt_vs_redis"] = rd ? ratio(t.rtt.p50, rd->rtt.p50) : json(nullptr);
  r["bulk_vs_redis"] = rd ? ratio(t.bulk_out_per_s, rd->pipelined_per_s) : json(nullptr);
  r["rtt_vs_zmq_pair"] = ratio(t.rtt.p50, f.zmq.pair.p50);
  r["farm_vs_zmq_farm"] = ratio(t.farm_per_s[0], f.zmq.farm_per_s[0]);
  r["farm2_vs_zmq_farm"] = ratio(t.farm_per_s[1], f.zmq.farm_per_s[1]);
  r["zmq_farm_vs_redis"] = rd ? ratio(f.zmq.farm_per_s[0], rd->farm_per_s[0]) : json(nullptr);
  r["zmq_farm2_vs_redis"] = rd ? ratio(f.zmq.farm_per_s[1], rd->farm_per_s[1]) : json(nullptr);
  r["zmq_pair_vs_redis"] = rd ? ratio(f.zmq.pair.p50, rd->rtt.p50) : json(nullptr);
  r["rtt_vs_redis_unpipelined"] = rd ? ratio(t.rtt.p50, rd->rtt_unpipelined.p50) : json(nullptr);
  r["in_1m_vs_empty"] = ratio(m.in_full.p50, m.in_empty.p50);
  // Durable (--data, --fsync P) against Redis with AOF (appendfsync P).
  for (int p = 0; p < 2; ++p) {
    std::string policy = kFsyncPolicies[p];
    const DurableFigures& d = f.durable;
    r["durable_bulk_out_per_s_" + policy] = rate(d.bulk_out_per_s[p]);
    r["durable_farm2_tasks_per_s_" + policy] = rate(d.farm2_per_s[p]);
    r["redis_aof_pipelined_per_s_" + policy] = rd ? rate(rd->aof_pipelined_per_s[p]) : json(nullptr);
    r["redis_aof_farm2_tasks_per_s_" + policy] = rd ? rate(rd->aof_farm2_per_s[p]) : json(nullptr);
    r["durable_bulk_vs_redis_aof_" + policy] =
        rd ? ratio(d.bulk_out_per_s[p], rd->aof_pipelined_per_s[p]) : json(nullptr);
    r["durable_farm2_vs_redis_aof_" + policy] =
        rd ? ratio(d.farm2_per_s[p], rd->aof_farm2_per_s[p]) : json(nullptr);
  }

  r["targets"] = {
      {"farm_vs_redis_ge_1", target(r["farm_vs_redis"], [](double v) { return v >= 1.0; })},
      {"farm2_vs_redis_ge_1", target(r["farm2_vs_redis"], [](double v) { return v >= 1.0; })},
      {"rtt_vs_redis_le_1_5", target(r["rtt_vs_redis"], [](double v) { return v <= 1.5; })},
      {"in_1m_vs_empty_le_1_25", target(r["in_1m_vs_empty"], [](double v) { return v <= 1.25; })},
      {"bytes_per_tuple_lt_100", target(r["bytes_per_tuple"], [](double v) { return v < 100.0; })},
  };
  for (std::string policy : kFsyncPolicies)
    r["targets"]["durable_farm2_vs_redis_aof_" + policy + "_ge_1"] =
        target(r["durable_farm2_vs_redis_aof_" + policy], [](double v) { return v >= 1.0; });

  const Sizes& z = f.sizes;
  r["config"] = {
      {"samples", z.samples},
      {"warmup", z.warmup},
      {"tasks", z.tasks},
      {"bulk", z.bulk},
      {"batch", z.batch},
      {"filler_tuples", z.filler},
      {"filler_batch", z.filler_batch},
      {"payload_blob_bytes", z.payload},
      {"filler_blob_bytes", z.filler_blob},
      {"task_tuple_bytes", task_image_bytes(z)},
      {"zmq_frame_bytes", f.zmq.frame_bytes},
      {"redis_value_bytes", rd ? json(rd->value_bytes) : json(nullptr)},
      {"redis_version", rd ? json(rd->version) : json(nullptr)},
  };
  r["machine"] = {
      {"cpu", f.machine.cpu},
      {"cpus", f.machine.cpus},
      {"kernel", f.machine.kernel},
      {"memory_bytes", f.machine.memory_bytes},
      {"load_average_start", round_to(f.load_start, 2)},
      {"load_average_end", round_to(f.load_end, 2)},
  };
  r["date"] = f.date;
  r["notes"] = f.notes;
  return r;
}

void print_table(const json& r, std::ostream& out) {
  auto fmt = [](const json& v, const char* unit) {
    if (v.is_null()) return std::string("-");
    std::ostringstream os;
    double d = v.get<double>();
    if (std::abs(d) >= 1000)
      os << std::fixed << std::setprecision(0) << d;
    else
      os << std::setprecision(4) << d;
    if (*unit) os << " " << unit;
    return os.str();
  };
  auto row = [&](const std::string& what, const json& ours, const json& anchor, const char* unit,
                 const json& ratio) {
    out << "  " << std::left << std::setw(40) << what << std::right << std::setw(16) << fmt(ours, unit)
        << std::setw(16) << fmt(anchor, unit) << std::setw(9) << fmt(ratio, "") << "\n";
  };
  const auto& c = r["config"];
  out << "piranha ts bench  " << r["date"].get<std::string>() << "  "
      << r["machine"]["cpu"].get<std::string>() << " x" << r["machine"]["cpus"] << ", "
      << r["machine"]["kernel"].get<std::string>() << "\n";
  out << "  tuples (\"task\", i, blob(" << c["payload_blob_bytes"] << ")) = " << c["task_tuple_bytes"]
      << " bytes; Redis values " << (c["redis_value_bytes"].is_null() ? json("-") : c["redis_value_bytes"])
      << " bytes; " << c["samples"] << " samples, " << c["tasks"] << " tasks per farm\n\n";
  out << "  " << std::left << std::setw(40) << "" << std::right << std::setw(16) << "tuple space"
      << std::setw(16) << "Redis" << std::setw(9) << "ratio"
      << "\n";
  row("round trip p50 (out+in / LPUSH+BRPOP)", r["rtt_us_p50"], r["redis_rtt_us_p50"], "us",
      r["rtt_vs_redis"]);
  row("round trip p99", r["rtt_us_p99"], r["redis_rtt_us_p99"], "us", nullptr);
  row("  Redis waiting for LPUSH's reply, p50", nullptr, r["redis_rtt_unpipelined_us_p50"], "us",
      r["rtt_vs_redis_unpipelined"]);
  row("task farm, 1 worker", r["farm_tasks_per_s"], r["redis_farm_tasks_per_s"], "/s", r["farm_vs_redis"]);
  row("task farm, 2 workers", r["farm2_tasks_per_s"], r["redis_farm2_tasks_per_s"], "/s",
      r["farm2_vs_redis"]);
  row("  ZeroMQ queue farm, 1 / 2 workers", r["zmq_farm_tasks_per_s"], r["zmq_farm2_tasks_per_s"], "/s",
      nullptr);
  row("  task farm / ZeroMQ queue farm, 1 / 2", r["farm_vs_zmq_farm"], r["farm2_vs_zmq_farm"], "", nullptr);
  row("bulk write (out_many / pipelined LPUSH)", r["bulk_out_per_s"], r["redis_pipelined_per_s"], "/s",
      r["bulk_vs_redis"]);
  row("bulk write (variadic LPUSH)", nullptr, r["redis_lpush_batch_per_s"], "/s", nullptr);
  for (std::string policy : kFsyncPolicies) {
    row("durable bulk write, fsync " + policy, r["durable_bulk_out_per_s_" + policy],
        r["redis_aof_pipelined_per_s_" + policy], "/s", r["durable_bulk_vs_redis_aof_" + policy]);
    row("durable task farm 2 workers, fsync " + policy, r["durable_farm2_tasks_per_s_" + policy],
        r["redis_aof_farm2_tasks_per_s_" + policy], "/s", r["durable_farm2_vs_redis_aof_" + policy]);
  }
  auto sum = [](const json& a, const json& b) {
    return a.is_null() || b.is_null() ? json(nullptr) : json(a.get<double>() + b.get<double>());
  };
  row("CPU per round trip (server + client)", sum(r["rtt_server_cpu_us"], r["rtt_client_cpu_us"]),
      sum(r["redis_rtt_server_cpu_us"], r["redis_rtt_client_cpu_us"]), "us", nullptr);
  row("CPU per farm task, 1 worker (all procs)", r["farm_cpu_us_per_task"], r["redis_farm_cpu_us_per_task"],
      "us", nullptr);
  row("CPU per farm task, 2 workers", r["farm2_cpu_us_per_task"], r["redis_farm2_cpu_us_per_task"], "us",
      nullptr);
  row("resident bytes per tuple / list item", r["rss_bytes_per_tuple"], r["redis_rss_bytes_per_item"], "B",
      nullptr);
  if (!r["curve_rtt_us_p50"].is_null()) {
    out << "\n  " << std::left << std::setw(40) << "measured in turns:" << std::right << std::setw(16)
        << "with CURVE" << std::setw(16) << "plain" << std::setw(9) << "ratio"
        << "\n";
    row("round trip p50", r["curve_rtt_us_p50"], r["curve_plain_rtt_us_p50"], "us", r["curve_rtt_vs_plain"]);
    row("round trip p99", r["curve_rtt_us_p99"], r["curve_plain_rtt_us_p99"], "us", nullptr);
    row("task farm, 1 worker", r["curve_farm_tasks_per_s"], r["curve_plain_farm_tasks_per_s"], "/s",
        r["curve_farm_vs_plain"]);
    row("task farm, 2 workers", r["curve_farm2_tasks_per_s"], r["curve_plain_farm2_tasks_per_s"], "/s",
        r["curve_farm2_vs_plain"]);
    row("CPU per round trip: server", r["curve_rtt_server_cpu_us"], r["curve_plain_rtt_server_cpu_us"], "us",
        nullptr);
    row("CPU per round trip: client", r["curve_rtt_client_cpu_us"], r["curve_plain_rtt_client_cpu_us"], "us",
        nullptr);
    row("CPU per farm task, 1 worker (all procs)", r["curve_farm_cpu_us_per_task"],
        r["curve_plain_farm_cpu_us_per_task"], "us", nullptr);
    row("CPU per farm task, 2 workers", r["curve_farm2_cpu_us_per_task"],
        r["curve_plain_farm2_cpu_us_per_task"], "us", nullptr);
  }
  out << "\n";
  out << "  " << std::left << std::setw(40) << "ZeroMQ echo round trip p50 / p99" << std::right
      << std::setw(16) << fmt(r["zmq_rtt_us_p50"], "us") << std::setw(16) << fmt(r["zmq_rtt_us_p99"], "us")
      << "\n";
  out << "  " << std::left << std::setw(40) << "ZeroMQ 2 pipelined echoes p50 (floor)" << std::right
      << std::setw(16) << fmt(r["zmq_pair_us_p50"], "us") << "\n";
  out << "  " << std::left << std::setw(40) << "ZeroMQ CPU per echo: server / client" << std::right
      << std::setw(16) << fmt(r["zmq_server_cpu_us"], "us") << std::setw(16)
      << fmt(r["zmq_client_cpu_us"], "us") << "\n";
  out << "  " << std::left << std::setw(40) << "round trip halves p50: post out / in" << std::right
      << std::setw(16) << fmt(r["out_us_p50"], "us") << std::setw(16) << fmt(r["in_us_p50"], "us") << "\n";
  out << "  " << std::left << std::setw(40)
      << "in p50, empty / " + std::to_string(c["filler_tuples"].get<long>()) + " resident" << std::right
      << std::setw(16) << fmt(r["in_us_p50_empty"], "us") << std::setw(16) << fmt(r["in_us_p50_1m"], "us")
      << std::setw(9) << fmt(r["in_1m_vs_empty"], "") << "\n";
  out << "  " << std::left << std::setw(40) << "bytes per tuple: payload / overhead" << std::right
      << std::setw(16) << fmt(r["payload_bytes_per_tuple"], "B") << std::setw(16)
      << fmt(r["bytes_per_tuple"], "B") << "\n\n";

  static const std::pair<const char*, const char*> kTargets[] = {
      {"farm_vs_redis_ge_1", "task farm (1 worker) >= Redis"},
      {"farm2_vs_redis_ge_1", "task farm (2 workers) >= Redis"},
      {"rtt_vs_redis_le_1_5", "round trip p50 <= 1.5x Redis"},
      {"in_1m_vs_empty_le_1_25", "in p50 with 1M resident <= 1.25x empty"},
      {"bytes_per_tuple_lt_100", "overhead per tuple < 100 bytes"},
      {"durable_farm2_vs_redis_aof_always_ge_1", "durable farm (2 workers) >= Redis AOF, fsync always"},
      {"durable_farm2_vs_redis_aof_everysec_ge_1", "durable farm (2 workers) >= Redis AOF, everysec"},
  };
  out << "  targets\n";
  for (auto [key, what] : kTargets) {
    const json& v = r["targets"][key];
    out << "    " << (v.is_null() ? "n/a " : v.get<bool>() ? "MET " : "MISS") << "  " << what << "\n";
  }
  for (const auto& n : r["notes"]) out << "\n  note: " << n.get<std::string>() << "\n";
}

}  // namespace piranha::bench

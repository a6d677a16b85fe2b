#include "piranha/trellis/standard_types.h"

namespace piranha::trellis {
namespace {

class Counter : public Node {
 public:
  explicit Counter(const Params& p) : step_(p.integer("step", 1)) {}
  Value calculate(Context& ctx) override {
    std::int64_t n = ctx.state().is_int() ? ctx.state().as_int() : 0;
    for (const auto& c : ctx.commands())
      if (c.data.is_int()) n = c.data.as_int();
    if (ctx.activated_by(Cause::Probe)) n += step_;
    return n;
  }

 private:
  std::int64_t step_;
};

class Constant : public Node {
 public:
  explicit Constant(const Params& p) : value_(p.value("value")) {}
  Value calculate(Context&) override { return value_; }

 private:
  Value value_;
};

// The sum of the numeric states of the inferiors that are reachable.
Value sum_of(const Context& ctx) {
  std::int64_t ints = 0;
  double doubles = 0;
  bool any_double = false;
  for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
    if (ctx.inferior_link(i) != LinkState::Up) continue;
    const Value& v = ctx.inferior(i);
    if (v.is_int()) ints += v.as_int();
    if (v.is_double()) {
      doubles += v.as_number();
      any_double = true;
    }
  }
  if (any_double) return doubles + static_cast<double>(ints);
  return ints;
}

class Sum : public Node {
 public:
  explicit Sum(const Params& p) : relay_(p.boolean("relay", false)) {}
  Value calculate(Context& ctx) override {
    if (relay_)
      for (const auto& c : ctx.commands()) ctx.command_all(c.data);
    return sum_of(ctx);
  }

 private:
  bool relay_;
};

class Watch : public Node {
 public:
  explicit Watch(const Params&) {}
  Value calculate(Context& ctx) override {
    Value::Map m;
    for (std::size_t i = 0; i < ctx.inferior_count(); ++i) {
      const bool up = ctx.inferior_link(i) == LinkState::Up;
      m.insert_or_assign(ctx.inferior_name(i), up ? ctx.inferior(i) : Value("down"));
    }
    return m;
  }
};

class Relay : public Node {
 public:
  explicit Relay(const Params&) {}
  Value calculate(Context& ctx) override {
    if (ctx.commands().empty()) return ctx.state();
    for (const auto& c : ctx.commands()) ctx.command_all(c.data);
    return ctx.commands().back().data;
  }
};

class Limit : public Node {
 public:
  explicit Limit(const Params& p) : limit_(p.number("limit")), reset_(p.value("reset")) {
    if (reset_.is_null()) reset_ = 0;
  }
  Value calculate(Context& ctx) override {
    Value total = sum_of(ctx);
    if (total.as_number() >= limit_) ctx.command_all(reset_);
    return total;
  }

 private:
  double limit_;
  Value reset_;
};

}  // namespace

void add_standard_types(Registry& types) {
  types.add<Counter>("counter", "counts probes; a command with an integer sets it");
  types.add<Constant>("constant", "always params.value");
  types.add<Sum>("sum", "sum of the inferiors' numeric states");
  types.add<Watch>("watch", "map of inferior -> state, or \"down\"");
  types.add<Relay>("relay", "passes each command on to every inferior");
  types.add<Limit>("limit", "sum of inferiors; commands them params.reset at params.limit");
}

}  // namespace piranha::trellis

#include "core.h"

#include <algorithm>
#include <exception>
#include <stdexcept>

namespace piranha::trellis {
namespace detail {
namespace {

constexpr std::size_t kRecentMisses = 100;

int position(const std::unordered_map<int, int>& positions, int x) {
  const auto it = positions.find(x);
  return it == positions.end() ? -1 : it->second;
}

}  // namespace

Core::Core(Program program, const Registry& types, std::string_view host, std::function<TimePoint()> now,
           Sink& sink)
    : program_(std::move(program)), now_(std::move(now)), sink_(sink) {
  cells_.resize(program_.nodes.size());
  for (std::size_t i = 0; i < cells_.size(); ++i) {
    Cell& c = cells_[i];
    c.index = static_cast<int>(i);
    c.spec = &program_.nodes[i];
    c.local = host.empty() || c.spec->host == host;
    c.stats.name = c.spec->name;
  }
  for (const Cell& c : cells_) index_.emplace(c.spec->name, c.index);
  for (Cell& c : cells_) {
    for (const auto& name : c.spec->inferiors) {
      auto it = index_.find(name);
      if (it == index_.end()) throw std::invalid_argument("trellis: unknown inferior " + name);
      int j = it->second;
      Cell& inferior = cells_[static_cast<std::size_t>(j)];
      c.inferior_position.try_emplace(j, static_cast<int>(c.inferiors.size()));
      c.inferiors.push_back(j);
      inferior.superior_position.try_emplace(c.index, static_cast<int>(inferior.superiors.size()));
      inferior.superiors.push_back(c.index);
    }
  }
  for (Cell& c : cells_)
    for (int s : c.superiors)
      c.position_above.push_back(position(cells_[static_cast<std::size_t>(s)].inferior_position, c.index));
  for (Cell& c : cells_) {
    auto link_of = [&](int j) {
      return cells_[static_cast<std::size_t>(j)].local ? LinkState::Up : LinkState::Down;
    };
    c.inferior_states.assign(c.inferiors.size(), Value{});
    for (int j : c.inferiors) c.inferior_links.push_back(link_of(j));
    for (int j : c.superiors) c.superior_links.push_back(link_of(j));
    if (c.local) c.node = types.make(c.spec->type, Params(c.spec->params));
  }
}

int Core::index(std::string_view name) const {
  auto it = index_.find(std::string(name));
  int i = it == index_.end() ? -1 : it->second;
  if (i < 0) throw std::out_of_range("no node named \"" + std::string(name) + "\" in the program");
  return i;
}

int Core::local_index(std::string_view name) const {
  int i = index(name);
  if (!cell(i).local)
    throw std::out_of_range("node \"" + std::string(name) + "\" is placed on host " + cell(i).spec->host);
  return i;
}

unsigned Core::process(int i, std::vector<Activation>& batch) {
  Cell& c = cell(i);
  Context ctx(*this, c);
  Trace trace;
  for (Activation& a : batch) {
    bool cause = false;
    switch (a.cause) {
      case Cause::Inferior: {
        const bool hinted = a.position >= 0 && static_cast<std::size_t>(a.position) < c.inferiors.size() &&
                            c.inferiors[static_cast<std::size_t>(a.position)] == a.from;
        int k = hinted ? a.position : position(c.inferior_position, a.from);
        if (k < 0) break;  // not an inferior of this node: ignore
        Value& known = c.inferior_states[static_cast<std::size_t>(k)];
        if (!a.changed && known == a.data) break;
        known = std::move(a.data);
        cause = true;
        break;
      }
      case Cause::Link: {
        LinkState s = a.data.is_bool() && a.data.as_bool() ? LinkState::Up : LinkState::Down;
        std::vector<LinkState>* links = &c.inferior_links;
        int k = position(c.inferior_position, a.from);
        if (k < 0) {
          links = &c.superior_links;
          k = position(c.superior_position, a.from);
        }
        if (k < 0 || (*links)[static_cast<std::size_t>(k)] == s) break;
        (*links)[static_cast<std::size_t>(k)] = s;
        cause = true;
        break;
      }
      case Cause::Command:
        ctx.commands_.push_back(
            Command{a.from < 0 ? std::string() : cell(a.from).spec->name, std::move(a.data)});
        sink_.commanded(c, ctx.commands_.back());
        cause = true;
        break;
      case Cause::Query:
      case Cause::Probe: cause = true; break;
    }
    if (!cause) continue;
    ctx.causes_ |= static_cast<unsigned>(a.cause);
    if (a.trace.id != 0 && (trace.id == 0 || a.trace.started < trace.started)) trace = a.trace;
  }
  batch.clear();
  if (ctx.causes_ == 0) return 0;

  TimePoint start = now_();
  bool ok = true;
  Value next;
  try {
    next = c.node->calculate(ctx);
  } catch (const std::exception&) {
    ok = false;
  }
  TimePoint done = now_();
  c.stats.calculation.add(done - start);
  if (!ok) {
    ++c.stats.errors;
    return ctx.causes_;
  }
  if (c.superiors.empty() && trace.id != 0) record_top(c, trace, done);
  if (!(next == c.state)) {
    c.state = std::move(next);
    ++c.stats.changes;
    sink_.changed(c);
    for (std::size_t k = 0; k < c.superiors.size(); ++k) {
      const int s = c.superiors[k];
      Activation a{Cause::Inferior, i, c.state, trace};
      a.changed = true;
      a.position = c.position_above[k];
      sink_.deliver(s, std::move(a));
    }
  }
  for (auto& o : ctx.orders_) {
    int to = c.inferiors[o.inferior];
    sink_.deliver(to, Activation{o.is_command ? Cause::Command : Cause::Query, i, std::move(o.data), trace});
  }
  return ctx.causes_;
}

void Core::record_top(Cell& c, const Trace& t, TimePoint done) {
  Duration latency = done - t.started;
  c.stats.probe_to_top.add(latency);
  if (!program_.deadline || latency <= *program_.deadline) return;
  ++misses_;
  DeadlineMiss m{c.spec->name, t.origin >= 0 ? cell(t.origin).spec->name : std::string(), latency,
                 *program_.deadline};
  recent_misses_.push_back(m);
  if (recent_misses_.size() > kRecentMisses) recent_misses_.pop_front();
  sink_.missed(m);
}

Report Core::report() const {
  Report r;
  for (const Cell& c : cells_)
    if (c.local) r.nodes.push_back(c.stats);
  r.misses = misses_;
  r.recent_misses.assign(recent_misses_.begin(), recent_misses_.end());
  return r;
}

}  // namespace detail

// Context ---------------------------------------------------------------

const std::string& Context::name() const {
  return cell_.spec->name;
}
const Value& Context::state() const {
  return cell_.state;
}
TimePoint Context::now() const {
  return core_.now();
}

std::size_t Context::inferior_count() const {
  return cell_.inferiors.size();
}
const std::string& Context::inferior_name(std::size_t i) const {
  return core_.cell(cell_.inferiors.at(i)).spec->name;
}
const Value& Context::inferior(std::size_t i) const {
  return cell_.inferior_states.at(i);
}
const Value& Context::inferior(std::string_view name) const {
  return inferior(index_of(name));
}
LinkState Context::inferior_link(std::size_t i) const {
  return cell_.inferior_links.at(i);
}

std::size_t Context::superior_count() const {
  return cell_.superiors.size();
}
const std::string& Context::superior_name(std::size_t i) const {
  return core_.cell(cell_.superiors.at(i)).spec->name;
}
LinkState Context::superior_link(std::size_t i) const {
  return cell_.superior_links.at(i);
}

std::size_t Context::index_of(std::string_view inferior) const {
  for (std::size_t k = 0; k < cell_.inferiors.size(); ++k)
    if (core_.cell(cell_.inferiors[k]).spec->name == inferior) return k;
  throw std::out_of_range("\"" + std::string(inferior) + "\" is not an inferior of " + name());
}

void Context::query(std::size_t i) {
  if (i >= cell_.inferiors.size()) throw std::out_of_range("query: no inferior " + std::to_string(i));
  orders_.push_back(Order{i, false, Value{}});
}

void Context::command(std::size_t i, Value data) {
  if (i >= cell_.inferiors.size()) throw std::out_of_range("command: no inferior " + std::to_string(i));
  orders_.push_back(Order{i, true, std::move(data)});
}

void Context::command(std::string_view inferior, Value data) {
  command(index_of(inferior), std::move(data));
}

void Context::command_all(const Value& data) {
  for (std::size_t i = 0; i < cell_.inferiors.size(); ++i) orders_.push_back(Order{i, true, data});
}

std::string_view cause_name(Cause c) {
  switch (c) {
    case Cause::Inferior: return "inferior";
    case Cause::Query: return "query";
    case Cause::Probe: return "probe";
    case Cause::Command: return "command";
    case Cause::Link: return "link";
  }
  return "?";
}

}  // namespace piranha::trellis

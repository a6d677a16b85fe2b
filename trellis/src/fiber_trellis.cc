#include "piranha/trellis/fiber_trellis.h"

#include <atomic>
#include <boost/fiber/all.hpp>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "core.h"
#include "links.h"

namespace piranha::trellis {
namespace {

using detail::Activation;

// An unbounded fiber channel that is drained all at once. Push from any
// thread; pop from one fiber.
template <class T>
class Channel {
 public:
  void push(T item) {
    {
      std::unique_lock<boost::fibers::mutex> lock(mutex_);
      items_.push_back(std::move(item));
    }
    ready_.notify_one();
  }
  // Waits for items; moves all of them into `out`. False once closed.
  bool pop_all(std::vector<T>& out) {
    std::unique_lock<boost::fibers::mutex> lock(mutex_);
    ready_.wait(lock, [&] { return !items_.empty() || closed_; });
    if (items_.empty()) return false;
    out.swap(items_);
    return true;
  }
  void close() {
    {
      std::unique_lock<boost::fibers::mutex> lock(mutex_);
      closed_ = true;
    }
    ready_.notify_all();
  }

 private:
  boost::fibers::mutex mutex_;
  boost::fibers::condition_variable ready_;
  std::vector<T> items_;
  bool closed_ = false;
};

// An activation for a local node, handed over by another thread.
struct Delivery {
  int to;
  Activation activation;
};

}  // namespace

struct FiberTrellis::Impl : detail::Sink {
  FiberOptions options;
  int self = -1;  // host index; -1 when the program has no hosts
  std::unique_ptr<detail::Core> core;
  std::vector<std::unique_ptr<Channel<Activation>>> channels;  // null for remote nodes
  std::vector<int> host_of;                                    // node -> host index (-1: no hosts)
  std::unordered_map<std::string, int> index;                  // node name -> index
  // Per neighbouring host: (local node, remote neighbour) pairs, and the
  // (local inferior, remote superior) pairs among them.
  std::map<int, std::vector<std::pair<int, int>>> edges, up_edges;

  mutable std::mutex snapshot_mutex;
  std::vector<Value> snapshot;
  std::mutex event_mutex;

  // The trellis thread's main fiber waits here for report requests and stop.
  boost::fibers::mutex control_mutex;
  boost::fibers::condition_variable control;
  std::deque<std::promise<Report>*> report_requests;
  bool stopping = false;
  bool answering = true;             // the main fiber still answers report requests
  std::atomic<bool> stopped{false};  // the thread has been joined

  // Activations from the link thread, handed to the nodes' channels by one
  // fiber: one cross-thread wake-up per burst instead of one per activation.
  Channel<Delivery> inbound;

  std::unique_ptr<detail::Links> links;
  std::thread thread;

  Impl(const Program& program, const Registry& types, FiberOptions o) : options(std::move(o)) {
    validate(program, types);
    if (!program.hosts.empty()) {
      if (options.host.empty())
        throw InputError(program.source, 0, "the program places nodes on hosts; say which host runs here");
      self = program.host_index(options.host);
      if (self < 0)
        throw InputError(program.source, 0, "no host named \"" + options.host + "\" in the program");
    } else if (!options.host.empty()) {
      throw InputError(program.source, 0,
                       "the program has no hosts, so none can be named \"" + options.host + "\"");
    }
    core = std::make_unique<detail::Core>(
        program, types, options.host, [] { return Clock::now(); }, *this);
    const Program& p = core->program();
    for (std::size_t i = 0; i < p.nodes.size(); ++i) {
      index.emplace(p.nodes[i].name, static_cast<int>(i));
      host_of.push_back(self < 0 ? -1 : p.host_index(p.nodes[i].host));
      channels.push_back(core->cell(static_cast<int>(i)).local ? std::make_unique<Channel<Activation>>()
                                                               : nullptr);
    }
    snapshot.resize(p.nodes.size());
    std::vector<int> neighbours;
    for (std::size_t i = 0; i < core->size(); ++i) {
      const detail::Cell& c = core->cell(static_cast<int>(i));
      if (!c.local) continue;
      auto note = [&](int r, bool up) {
        int h = host_of[static_cast<std::size_t>(r)];
        if (h == self || h < 0) return;
        edges[h].emplace_back(c.index, r);
        if (up) up_edges[h].emplace_back(c.index, r);
      };
      for (int r : c.inferiors) note(r, false);
      for (int r : c.superiors) note(r, true);
    }
    if (self >= 0) {
      for (const auto& [h, e] : edges) neighbours.push_back(h);
      detail::Links::Hooks hooks;
      hooks.on_activation = [this](int from, wire::Message&& m, Duration one_way) {
        arrived(from, std::move(m), one_way);
      };
      hooks.on_link = [this](int host, LinkState s) { link_changed(host, s); };
      links = std::make_unique<detail::Links>(core->program(), self, std::move(neighbours), std::move(hooks));
      links->start();
    }
    thread = std::thread([this] { run(); });
  }

  ~Impl() override { stop(); }

  void stop() {
    if (stopped) return;
    {
      std::unique_lock<boost::fibers::mutex> lock(control_mutex);
      stopping = true;
    }
    control.notify_all();
    if (thread.joinable()) thread.join();
    if (links) links->stop();
    stopped = true;
  }

  // The trellis thread.
  void run() {
    std::vector<boost::fibers::fiber> fibers;
    boost::fibers::fixedsize_stack stacks(options.stack_bytes);
    fibers.emplace_back(std::allocator_arg, stacks, [this] {
      std::vector<Delivery> burst;
      while (inbound.pop_all(burst)) {
        for (auto& d : burst) push(d.to, std::move(d.activation));
        burst.clear();
      }
    });
    for (std::size_t i = 0; i < channels.size(); ++i) {
      if (!channels[i]) continue;
      int node = static_cast<int>(i);
      fibers.emplace_back(std::allocator_arg, stacks, [this, node] {
        std::vector<Activation> batch;
        Channel<Activation>& in = *channels[static_cast<std::size_t>(node)];
        while (in.pop_all(batch)) core->process(node, batch);
      });
      if (auto every = core->program().nodes[i].probe_every)
        fibers.emplace_back(std::allocator_arg, stacks,
                            [this, node, every = *every] { probe_periodically(node, every); });
    }
    {
      std::unique_lock<boost::fibers::mutex> lock(control_mutex);
      while (true) {
        control.wait(lock, [&] { return stopping || !report_requests.empty(); });
        while (!report_requests.empty()) {
          report_requests.front()->set_value(make_report());
          report_requests.pop_front();
        }
        if (stopping) break;
      }
    }
    inbound.close();
    for (auto& c : channels)
      if (c) c->close();
    for (auto& f : fibers) f.join();
    std::unique_lock<boost::fibers::mutex> lock(control_mutex);
    answering = false;
    for (auto* r : report_requests) r->set_value(make_report());
    report_requests.clear();
  }

  void probe_periodically(int node, std::chrono::milliseconds every) {
    Clock::time_point next = Clock::now() + every;
    std::unique_lock<boost::fibers::mutex> lock(control_mutex);
    while (!control.wait_until(lock, next, [&] { return stopping; })) {
      lock.unlock();
      push(node, Activation{Cause::Probe, -1, Value{}, core->new_trace(node)});
      lock.lock();
      next += every;
      Clock::time_point now = Clock::now();
      if (next < now) next = now + every;  // fell behind: skip, do not burst
    }
  }

  Report make_report() const {
    Report r = core->report();
    if (links) r.links = links->stats();
    return r;
  }

  void push(int to, Activation a) { channels[static_cast<std::size_t>(to)]->push(std::move(a)); }

  void emit(Event e) {
    if (!options.on_event) return;
    std::lock_guard<std::mutex> lock(event_mutex);
    options.on_event(e);
  }

  // Sink -----------------------------------------------------------------

  void deliver(int to, Activation a) override {
    if (channels[static_cast<std::size_t>(to)]) {
      push(to, std::move(a));
      return;
    }
    send_remote(to, a);
  }

  void send_remote(int to, const Activation& a) {
    wire::Message m;
    m.kind = wire::Kind::Activation;
    m.cause = a.cause;
    if (a.from >= 0) m.from = core->cell(a.from).spec->name;
    m.to = core->cell(to).spec->name;
    m.data = a.data;
    if (a.trace.id != 0) {
      m.trace_id = a.trace.id;
      if (a.trace.origin >= 0) m.origin = core->cell(a.trace.origin).spec->name;
      m.elapsed_ns = (Clock::now() - a.trace.started).count();
    }
    std::string bytes;
    wire::encode(bytes, m);
    links->send(host_of[static_cast<std::size_t>(to)], std::move(bytes));
  }

  void changed(const detail::Cell& c) override {
    {
      std::lock_guard<std::mutex> lock(snapshot_mutex);
      snapshot[static_cast<std::size_t>(c.index)] = c.state;
    }
    if (options.on_event) emit(Event{Event::Kind::State, c.spec->name, "", c.state});
  }

  void commanded(const detail::Cell& c, const Command& cmd) override {
    if (options.on_event) emit(Event{Event::Kind::Command, c.spec->name, cmd.from, cmd.data});
  }

  void missed(const DeadlineMiss& m) override {
    if (options.on_event)
      emit(Event{Event::Kind::Miss, m.top, m.origin, Value(static_cast<double>(m.latency.count()) / 1e3)});
  }

  // Link thread ------------------------------------------------------------

  void arrived(int from_host, wire::Message&& m, Duration one_way) {
    auto to = index.find(m.to);
    if (to == index.end() || !channels[static_cast<std::size_t>(to->second)]) return;
    int from = -1;
    if (!m.from.empty()) {
      auto f = index.find(m.from);
      if (f == index.end() || host_of[static_cast<std::size_t>(f->second)] != from_host) return;
      from = f->second;
    }
    detail::Trace trace;
    if (m.trace_id != 0) {
      auto o = index.find(m.origin);
      trace = detail::Trace{m.trace_id, o == index.end() ? -1 : o->second,
                            Clock::now() - Duration(m.elapsed_ns) - one_way};
    }
    inbound.push(Delivery{to->second, Activation{m.cause, from, std::move(m.data), trace}});
  }

  void link_changed(int host, LinkState s) {
    emit(Event{Event::Kind::Link, "", core->program().hosts[static_cast<std::size_t>(host)].name,
               s == LinkState::Up ? "up" : "down"});
    for (auto [local, remote] : edges[host])
      inbound.push(Delivery{local, Activation{Cause::Link, remote, Value(s == LinkState::Up), {}}});
    if (s != LinkState::Up) return;
    // Resynchronize the superiors over there.
    for (auto [local, remote] : up_edges[host]) {
      Value state;
      {
        std::lock_guard<std::mutex> lock(snapshot_mutex);
        state = snapshot[static_cast<std::size_t>(local)];
      }
      send_remote(remote, Activation{Cause::Inferior, local, std::move(state), {}});
    }
  }
};

FiberTrellis::FiberTrellis(const Program& program, const Registry& types, FiberOptions options)
    : impl_(std::make_unique<Impl>(program, types, std::move(options))) {}

FiberTrellis::~FiberTrellis() = default;

void FiberTrellis::probe(std::string_view node) {
  int i = impl_->core->local_index(node);
  impl_->push(i, Activation{Cause::Probe, -1, Value{}, impl_->core->new_trace(i)});
}

void FiberTrellis::command(std::string_view node, Value data) {
  int i = impl_->core->local_index(node);
  impl_->push(i, Activation{Cause::Command, -1, std::move(data), {}});
}

Value FiberTrellis::state(std::string_view node) const {
  int i = impl_->core->local_index(node);
  std::lock_guard<std::mutex> lock(impl_->snapshot_mutex);
  return impl_->snapshot[static_cast<std::size_t>(i)];
}

std::vector<Value> FiberTrellis::states(std::span<const std::string> nodes) const {
  std::vector<int> at;
  at.reserve(nodes.size());
  for (const auto& n : nodes) at.push_back(impl_->core->local_index(n));
  std::vector<Value> out;
  out.reserve(at.size());
  std::lock_guard<std::mutex> lock(impl_->snapshot_mutex);
  for (int i : at) out.push_back(impl_->snapshot[static_cast<std::size_t>(i)]);
  return out;
}

Report FiberTrellis::report() const {
  if (impl_->stopped) return impl_->make_report();
  std::promise<Report> answer;
  std::future<Report> f = answer.get_future();
  {
    std::unique_lock<boost::fibers::mutex> lock(impl_->control_mutex);
    if (!impl_->answering) return impl_->make_report();  // the fibers are gone
    impl_->report_requests.push_back(&answer);
  }
  impl_->control.notify_all();
  return f.get();
}

LinkState FiberTrellis::link(std::string_view host) const {
  int h = impl_->core->program().host_index(host);
  if (h < 0) throw std::out_of_range("no host named \"" + std::string(host) + "\"");
  if (h == impl_->self || !impl_->links) return LinkState::Up;
  return impl_->links->state(h);
}

void FiberTrellis::stop() {
  impl_->stop();
}

}  // namespace piranha::trellis

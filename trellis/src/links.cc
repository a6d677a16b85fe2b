#include "links.h"

#include <sys/eventfd.h>
#include <unistd.h>

#include <chrono>
#include <stdexcept>
#include <zmq.hpp>

namespace piranha::trellis::detail {
namespace {

std::int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch()).count();
}

zmq::context_t& context() {
  static zmq::context_t ctx(1);
  return ctx;
}

}  // namespace

struct Links::Neighbour {
  int host = 0;
  zmq::socket_t dealer;
  LinkStats stats;
  Clock::time_point last_heard{};
};

struct Links::Sockets {
  zmq::socket_t router{context(), zmq::socket_type::router};
};

Links::Links(const Program& program, int self, std::vector<int> neighbours, Hooks hooks)
    : program_(program), self_(self), hooks_(std::move(hooks)), sockets_(std::make_unique<Sockets>()) {
  const HostSpec& me = program_.hosts.at(static_cast<std::size_t>(self_));
  sockets_->router.set(zmq::sockopt::linger, 0);
  sockets_->router.set(zmq::sockopt::sndhwm, 0);
  sockets_->router.set(zmq::sockopt::rcvhwm, 0);
  try {
    sockets_->router.bind(me.endpoint);
  } catch (const zmq::error_t& e) {
    throw std::runtime_error("host " + me.name + ": cannot bind " + me.endpoint + ": " + e.what());
  }
  for (int h : neighbours) {
    auto n = std::make_unique<Neighbour>();
    n->host = h;
    n->stats.host = program_.hosts.at(static_cast<std::size_t>(h)).name;
    n->dealer = zmq::socket_t(context(), zmq::socket_type::dealer);
    n->dealer.set(zmq::sockopt::linger, 0);
    n->dealer.set(zmq::sockopt::routing_id, me.name);
    n->dealer.set(zmq::sockopt::immediate, 1);  // never queue for a peer that is not connected
    n->dealer.set(zmq::sockopt::sndhwm, 100000);
    n->dealer.set(zmq::sockopt::reconnect_ivl, 50);
    n->dealer.set(zmq::sockopt::reconnect_ivl_max, 500);
    n->dealer.connect(program_.hosts.at(static_cast<std::size_t>(h)).endpoint);
    neighbours_.push_back(std::move(n));
  }
  wake_fd_ = ::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (wake_fd_ < 0) throw std::runtime_error("links: eventfd failed");
}

void Links::start() {
  thread_ = std::thread([this] { loop(); });
}

Links::~Links() {
  stop();
  if (wake_fd_ >= 0) ::close(wake_fd_);
}

void Links::stop() {
  if (stopping_.exchange(true)) return;
  std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
  if (thread_.joinable()) thread_.join();
}

Links::Neighbour* Links::find(int host) {
  for (auto& n : neighbours_)
    if (n->host == host) return n.get();
  return nullptr;
}

void Links::send(int host, std::string bytes) {
  bool was_empty;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    was_empty = outbox_.empty();
    outbox_.emplace_back(host, std::move(bytes));
  }
  // The link thread empties the whole outbox once woken: one wake-up suffices.
  if (!was_empty) return;
  std::uint64_t one = 1;
  (void)!::write(wake_fd_, &one, sizeof one);
}

LinkState Links::state(int host) const {
  if (host == self_) return LinkState::Up;
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& n : neighbours_)
    if (n->host == host) return n->stats.state;
  return LinkState::Down;
}

std::vector<LinkStats> Links::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LinkStats> out;
  for (const auto& n : neighbours_) out.push_back(n->stats);
  return out;
}

// Called on the link thread with mutex_ not held.
void Links::heard(Neighbour& n) {
  n.last_heard = Clock::now();
  bool came_up = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (n.stats.state == LinkState::Down) {
      n.stats.state = LinkState::Up;
      came_up = true;
    }
  }
  if (came_up) hooks_.on_link(n.host, LinkState::Up);
}

void Links::loop() {
  using std::chrono::milliseconds;
  std::vector<zmq::pollitem_t> items;
  items.push_back({nullptr, wake_fd_, ZMQ_POLLIN, 0});
  items.push_back({sockets_->router.handle(), 0, ZMQ_POLLIN, 0});
  for (auto& n : neighbours_) items.push_back({n->dealer.handle(), 0, ZMQ_POLLIN, 0});
  std::string buf;
  std::deque<std::pair<int, std::string>> sending;
  Clock::time_point next_beat = Clock::now();
  while (!stopping_) {
    Clock::time_point now = Clock::now();
    if (now >= next_beat) {
      next_beat = now + program_.heartbeat;
      wire::Message ping;
      ping.kind = wire::Kind::Ping;
      ping.sent_ns = now_ns();
      wire::encode(buf, ping);
      for (auto& n : neighbours_) {
        try {
          n->dealer.send(zmq::buffer(buf), zmq::send_flags::dontwait);
        } catch (const zmq::error_t&) {
        }
        bool went_down = false;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          if (n->stats.state == LinkState::Up && now - n->last_heard > program_.link_timeout) {
            n->stats.state = LinkState::Down;
            ++n->stats.downs;
            went_down = true;
          }
        }
        if (went_down) hooks_.on_link(n->host, LinkState::Down);
      }
    }
    auto wait = std::chrono::duration_cast<milliseconds>(next_beat - Clock::now()) + milliseconds(1);
    try {
      zmq::poll(items.data(), items.size(), wait);
    } catch (const zmq::error_t&) {
      continue;  // EINTR
    }
    if (items[0].revents & ZMQ_POLLIN) {
      std::uint64_t count;
      (void)!::read(wake_fd_, &count, sizeof count);
      std::lock_guard<std::mutex> lock(mutex_);
      sending.swap(outbox_);
    }
    while (!sending.empty()) {
      auto& [host, bytes] = sending.front();
      if (Neighbour* n = find(host)) {
        bool sent = false;
        try {
          sent = n->dealer.send(zmq::buffer(bytes), zmq::send_flags::dontwait).has_value();
        } catch (const zmq::error_t&) {
        }
        std::lock_guard<std::mutex> lock(mutex_);
        if (sent) ++n->stats.sent;
      }
      sending.pop_front();
    }
    // Activations and pings from neighbours.
    for (int budget = 0; budget < 1024; ++budget) {
      zmq::message_t id, body;
      if (!sockets_->router.recv(id, zmq::recv_flags::dontwait)) break;
      if (!id.more() || !sockets_->router.recv(body, zmq::recv_flags::dontwait)) continue;
      while (body.more()) {  // ignore extra frames
        zmq::message_t extra;
        if (!sockets_->router.recv(extra, zmq::recv_flags::dontwait)) break;
      }
      int from = program_.host_index(id.to_string_view());
      Neighbour* n = find(from);
      if (!n) continue;  // not a neighbour in our program: ignore
      wire::Message m;
      try {
        m = wire::decode(body.to_string_view());
      } catch (const WireError&) {
        continue;
      }
      if (m.kind == wire::Kind::Ping) {
        m.kind = wire::Kind::Pong;
        wire::encode(buf, m);
        try {
          sockets_->router.send(id, zmq::send_flags::sndmore | zmq::send_flags::dontwait);
          sockets_->router.send(zmq::buffer(buf), zmq::send_flags::dontwait);
        } catch (const zmq::error_t&) {
        }
      } else if (m.kind == wire::Kind::Activation) {
        Duration one_way;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          ++n->stats.received;
          one_way = n->stats.round_trip.last / 2;
        }
        hooks_.on_activation(from, std::move(m), one_way);
      }
    }
    // Pongs.
    for (auto& n : neighbours_) {
      zmq::message_t body;
      while (n->dealer.recv(body, zmq::recv_flags::dontwait)) {
        wire::Message m;
        try {
          m = wire::decode(body.to_string_view());
        } catch (const WireError&) {
          continue;
        }
        if (m.kind != wire::Kind::Pong) continue;
        {
          std::lock_guard<std::mutex> lock(mutex_);
          n->stats.round_trip.add(Duration(now_ns() - m.sent_ns));
        }
        heard(*n);
      }
    }
  }
  sockets_->router.close();
  for (auto& n : neighbours_) n->dealer.close();
}

}  // namespace piranha::trellis::detail

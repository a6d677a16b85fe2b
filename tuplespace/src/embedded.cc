#include "piranha/tuplespace/embedded.h"

#include <atomic>

namespace piranha::ts {

// Under ThreadSanitizer, a loopback TCP port instead: over inproc:// each
// message's buffer passes from one thread to another inside libzmq, whose
// synchronisation TSan cannot see, and every message would be reported as a
// race (scripts/tsan.supp). Over TCP libzmq copies the bytes itself.
#if defined(__SANITIZE_THREAD__)
constexpr bool kInproc = false;
#else
constexpr bool kInproc = true;
#endif

ServerOptions EmbeddedServer::with_inproc(ServerOptions o, std::string& endpoint) {
  static std::atomic<int> next{0};
  endpoint = kInproc ? "inproc://piranha-embedded-" + std::to_string(next++) : "tcp://127.0.0.1:*";
  o.bind.push_back(endpoint);
  return o;
}

namespace {
ServerOptions inproc_only() {
  ServerOptions o;
  o.bind.clear();
  return o;
}
}  // namespace

EmbeddedServer::EmbeddedServer() : EmbeddedServer(inproc_only()) {}

EmbeddedServer::EmbeddedServer(ServerOptions options)
    : server_(with_inproc(std::move(options), endpoint_)), thread_([this] { server_.run(); }) {
  if (!kInproc) endpoint_ = server_.endpoints().back();  // the port the wildcard got
}

EmbeddedServer::~EmbeddedServer() {
  server_.stop();
  thread_.join();
}

}  // namespace piranha::ts

#include "piranha/tuplespace/embedded.h"

#include <atomic>

namespace piranha::ts {

ServerOptions EmbeddedServer::with_inproc(ServerOptions o, std::string& endpoint) {
  static std::atomic<int> next{0};
  endpoint = "inproc://piranha-embedded-" + std::to_string(next++);
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
    : server_(with_inproc(std::move(options), endpoint_)), thread_([this] { server_.run(); }) {}

EmbeddedServer::~EmbeddedServer() {
  server_.stop();
  thread_.join();
}

}  // namespace piranha::ts

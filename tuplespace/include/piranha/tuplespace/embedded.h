// EmbeddedServer: a tuple-space server running inside this process.
//
// The server runs its usual event loop on a background thread, bound to a
// private inproc:// endpoint (plus any endpoints you add), so clients in this
// process use the same Client/FiberClient API and the same wire protocol as
// with a remote server. A ThreadSanitizer build binds a loopback TCP port
// instead (embedded.cc says why).
#pragma once

#include <string>
#include <thread>

#include "piranha/tuplespace/server.h"

namespace piranha::ts {

class EmbeddedServer {
 public:
  // Starts a server reachable only from this process.
  EmbeddedServer();
  // Starts the server. options.bind is extended with a fresh inproc endpoint.
  explicit EmbeddedServer(ServerOptions options);
  // Stops the server and joins its thread.
  ~EmbeddedServer();
  EmbeddedServer(const EmbeddedServer&) = delete;
  EmbeddedServer& operator=(const EmbeddedServer&) = delete;

  // The inproc endpoint to give to Client / FiberClient.
  const std::string& endpoint() const { return endpoint_; }
  Server& server() { return server_; }

 private:
  static ServerOptions with_inproc(ServerOptions o, std::string& endpoint);
  std::string endpoint_;
  Server server_;
  std::thread thread_;
};

}  // namespace piranha::ts

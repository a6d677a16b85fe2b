// How libzmq is linked (CMakeLists.txt, PIRANHA_STATIC_ZMQ): with the
// GSS-API stand-ins of cmake/zmq_without_gssapi.cc, a socket that asks for
// ZeroMQ's GSSAPI mechanism is refused at the handshake, and nothing else
// happens to the process or its other connections.
#include <doctest/doctest.h>
#include <link.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>
#include <zmq.hpp>

// Only with the stand-ins linked in; with libzmq.so (PIRANHA_STATIC_ZMQ off,
// or the TSan build) there is nothing here to check.
#ifdef PIRANHA_ZMQ_WITHOUT_GSSAPI
namespace {

// The next event on `monitor` within `ms`, or 0.
int next_event(zmq::socket_t& monitor, int ms) {
  zmq::pollitem_t item{monitor.handle(), 0, ZMQ_POLLIN, 0};
  if (zmq::poll(&item, 1, std::chrono::milliseconds(ms)) == 0) return 0;
  zmq::message_t head, address;
  if (!monitor.recv(head) || !monitor.recv(address)) return 0;
  std::uint16_t event = 0;
  std::memcpy(&event, head.data(), sizeof event);
  return event;
}

// Whether a shared object whose path contains `part` is loaded here.
bool loaded(const char* part) {
  struct Search {
    const char* part;
    bool found;
  } search{part, false};
  dl_iterate_phdr(
      [](dl_phdr_info* info, std::size_t, void* data) {
        auto* s = static_cast<Search*>(data);
        if (info->dlpi_name && std::strstr(info->dlpi_name, s->part)) s->found = true;
        return 0;
      },
      &search);
  return search.found;
}

}  // namespace

TEST_CASE("a ZeroMQ socket that asks for GSS-API is refused at the handshake, and plain sockets go on") {
  // Linked as CMakeLists.txt says: neither libzmq.so nor the real GSS-API.
  CHECK(loaded("libc.so"));  // the search itself works
  CHECK_FALSE(loaded("libzmq.so"));
  CHECK_FALSE(loaded("libgssapi_krb5"));

  zmq::context_t ctx;
  zmq::socket_t server(ctx, zmq::socket_type::router);
  server.set(zmq::sockopt::linger, 0);
  server.set(zmq::sockopt::gssapi_server, true);
  server.bind("tcp://127.0.0.1:*");
  std::string endpoint = server.get(zmq::sockopt::last_endpoint);

  zmq::socket_t client(ctx, zmq::socket_type::dealer);
  client.set(zmq::sockopt::linger, 0);
  client.set(zmq::sockopt::gssapi_service_principal, "piranha");
  client.set(zmq::sockopt::handshake_ivl, 300);
  REQUIRE(zmq_socket_monitor(client.handle(), "inproc://gssapi-client", ZMQ_EVENT_ALL) == 0);
  zmq::socket_t monitor(ctx, zmq::socket_type::pair);
  monitor.connect("inproc://gssapi-client");
  client.connect(endpoint);

  bool refused = false;
  // The stand-ins refuse the first step, the handshake goes no further, and
  // its deadline (300 ms here, ZeroMQ's default 30 s) ends the connection.
  for (int event; !refused && (event = next_event(monitor, 3000)) != 0;) {
    refused = event == ZMQ_EVENT_HANDSHAKE_FAILED_NO_DETAIL || event == ZMQ_EVENT_HANDSHAKE_FAILED_PROTOCOL ||
              event == ZMQ_EVENT_HANDSHAKE_FAILED_AUTH || event == ZMQ_EVENT_DISCONNECTED;
  }
  CHECK(refused);
  zmq::pollitem_t item{server.handle(), 0, ZMQ_POLLIN, 0};
  CHECK(zmq::poll(&item, 1, std::chrono::milliseconds(100)) == 0);

  // A plain pair in the same context still talks.
  zmq::socket_t plain_server(ctx, zmq::socket_type::router), plain_client(ctx, zmq::socket_type::dealer);
  plain_server.set(zmq::sockopt::linger, 0);
  plain_client.set(zmq::sockopt::linger, 0);
  plain_server.bind("tcp://127.0.0.1:*");
  plain_client.connect(plain_server.get(zmq::sockopt::last_endpoint));
  plain_client.send(zmq::str_buffer("hello"), zmq::send_flags::none);
  zmq::message_t id, body;
  item = {plain_server.handle(), 0, ZMQ_POLLIN, 0};
  REQUIRE(zmq::poll(&item, 1, std::chrono::milliseconds(3000)) == 1);
  REQUIRE(plain_server.recv(id));
  REQUIRE(plain_server.recv(body));
  CHECK(body.to_string() == "hello");
}
#endif

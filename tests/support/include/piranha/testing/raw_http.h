// RawHttp: one TCP connection to an HTTP server on 127.0.0.1, written and
// read byte for byte, for tests that need what an HTTP client library will
// not do: send bytes that are not valid UTF-8 or not even valid HTTP, hold
// many event streams open at once without a thread each, or read a reply
// that never ends. Header-only; tests only. Not thread-safe.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace piranha::testing {

class RawHttp {
 public:
  // Connects to 127.0.0.1:port and sends `request` (bytes as they are).
  // Throws std::runtime_error when it cannot connect or send.
  RawHttp(int port, std::string_view request) {
    fd_ = ::socket(AF_INET, SOCK_STREAM, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<std::uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (::connect(fd_, reinterpret_cast<const sockaddr*>(&a), sizeof a) != 0) {
      ::close(fd_);
      throw std::runtime_error("cannot connect to 127.0.0.1:" + std::to_string(port));
    }
    std::size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = ::send(fd_, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) {
        ::close(fd_);
        throw std::runtime_error("cannot send the request");
      }
      sent += static_cast<std::size_t>(n);
    }
  }
  // A GET of `path` with the headers `extra` (each ending in \r\n).
  static std::string get(std::string_view path, std::string_view extra = "") {
    return "GET " + std::string(path) + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n" +
           std::string(extra) + "\r\n";
  }
  ~RawHttp() { ::close(fd_); }
  RawHttp(const RawHttp&) = delete;
  RawHttp& operator=(const RawHttp&) = delete;

  // Reads until what was received contains `part`, the server closes, or
  // `timeout` passes. Returns whether it contains `part`.
  bool wait_for(std::string_view part, std::chrono::milliseconds timeout) {
    read_until([&] { return text_.find(part) != std::string::npos; }, timeout);
    return text_.find(part) != std::string::npos;
  }
  // Reads until the server closes or `timeout` passes; returns whether it closed.
  bool wait_closed(std::chrono::milliseconds timeout) {
    read_until([] { return false; }, timeout);
    return closed_;
  }

  // Everything received so far: status line, headers, body.
  const std::string& text() const { return text_; }
  // The status code of the reply received so far, or 0.
  int status() const {
    if (text_.rfind("HTTP/1.", 0) != 0 || text_.size() < 12) return 0;
    return std::stoi(text_.substr(9, 3));
  }
  // The body received so far (after the headers' blank line).
  std::string body() const {
    const auto end = text_.find("\r\n\r\n");
    return end == std::string::npos ? std::string() : text_.substr(end + 4);
  }

 private:
  void read_until(const std::function<bool()>& done, std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (!done() && !closed_) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
      if (left.count() <= 0) return;
      pollfd p{fd_, POLLIN, 0};
      if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
      char chunk[16384];
      const ssize_t n = ::recv(fd_, chunk, sizeof chunk, 0);
      if (n <= 0)
        closed_ = true;
      else
        text_.append(chunk, static_cast<std::size_t>(n));
    }
  }

  int fd_ = -1;
  std::string text_;
  bool closed_ = false;
};

}  // namespace piranha::testing

// The live page's HTTP server (cpp-httplib), the module piranha-nps-page.so
// that LivePage (live_page.cc) loads: live_page_module.h states the interface
// and says why it is a module.
#include <httplib.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <thread>

#include "live_page_module.h"

namespace {

// Workers kept for requests other than event streams, beyond the streams'
// own: the page, /api/state, refusals, idle keep-alive connections.
constexpr int kOtherWorkers = 8;

struct Page {
  httplib::Server server;
  std::string token;   // what a request must present; empty: none asked
  std::string cookie;  // the cookie's name, with the port: pages on one host keep theirs apart
  int max_streams = 0;
  int streams = 0;  // open event streams, under mu
  std::thread thread;
  std::mutex mu;
  std::condition_variable changed;
  std::string state = "{}";
  piranha_nps_page_history history = nullptr;  // the program's history, with its context
  void* history_context = nullptr;
  std::uint64_t version = 0;
  bool stopping = false;
  std::atomic<bool> ended{false};  // the serving thread's listen returned
};

// `text` with every byte that does not belong to a well-formed UTF-8
// sequence replaced by U+FFFD: a reply that quotes the request (its path,
// percent-decoded by cpp-httplib, may be any bytes) is valid UTF-8, as its
// charset says.
std::string utf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  const auto byte = [&](std::size_t i) { return static_cast<unsigned char>(text[i]); };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned char b = byte(i);
    std::size_t n = 0;  // continuation bytes, and the range of the first one
    unsigned char lo = 0x80, hi = 0xBF;
    if (b < 0x80) {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    if (b >= 0xC2 && b <= 0xDF) {
      n = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      n = 2;
      if (b == 0xE0) lo = 0xA0;  // no overlong forms
      if (b == 0xED) hi = 0x9F;  // no surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      n = 3;
      if (b == 0xF0) lo = 0x90;
      if (b == 0xF4) hi = 0x8F;  // nothing past U+10FFFF
    }
    bool whole = n > 0 && i + n < text.size();
    for (std::size_t k = 1; whole && k <= n; ++k) {
      const unsigned char c = byte(i + k);
      whole = k == 1 ? c >= lo && c <= hi : c >= 0x80 && c <= 0xBF;
    }
    if (whole) {
      out.append(text.substr(i, n + 1));
      i += n + 1;
    } else {
      out += "\xEF\xBF\xBD";
      ++i;
    }
  }
  return out;
}

// One of the page's max_streams event streams, given back when destroyed.
class StreamSlot {
 public:
  // A slot, or null when all are taken.
  static std::shared_ptr<StreamSlot> take(Page& p) {
    std::lock_guard lock(p.mu);
    if (p.streams >= p.max_streams) return nullptr;
    ++p.streams;
    return std::shared_ptr<StreamSlot>(new StreamSlot(p));
  }
  ~StreamSlot() {
    std::lock_guard lock(p_.mu);
    --p_.streams;
  }
  StreamSlot(const StreamSlot&) = delete;
  StreamSlot& operator=(const StreamSlot&) = delete;

 private:
  explicit StreamSlot(Page& p) : p_(p) {}
  Page& p_;
};

// Compared in time that depends on the lengths only, so that a guesser
// learns nothing from how long a refusal takes.
bool same(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) diff |= static_cast<unsigned char>(a[i] ^ b[i]);
  return diff == 0;
}

// Whether the request presents the page's token: as a bearer token, or in
// the page's cookie.
bool presents_token(const Page& p, const httplib::Request& req) {
  const std::string auth = req.get_header_value("Authorization");
  if (auth.rfind("Bearer ", 0) == 0 && same(std::string_view(auth).substr(7), p.token)) return true;
  for (std::size_t i = 0, n = req.get_header_value_count("Cookie"); i < n; ++i) {
    const std::string cookies = req.get_header_value("Cookie", i);
    std::size_t at = 0;
    while (at < cookies.size()) {
      std::size_t end = cookies.find(';', at);
      if (end == std::string::npos) end = cookies.size();
      std::string_view one = std::string_view(cookies).substr(at, end - at);
      while (!one.empty() && one.front() == ' ') one.remove_prefix(1);
      const auto eq = one.find('=');
      if (eq != std::string_view::npos && one.substr(0, eq) == p.cookie && same(one.substr(eq + 1), p.token))
        return true;
      at = end + 1;
    }
  }
  return false;
}

// With a token, before any route: a request that presents it goes on; one
// with `?token=` right gets the cookie (and, for the page itself, a
// redirect that takes the token out of the address bar); any other is
// refused with 401, before it could take an event stream.
httplib::Server::HandlerResponse check_token(const Page& p, const httplib::Request& req,
                                             httplib::Response& res) {
  if (p.token.empty() || presents_token(p, req)) return httplib::Server::HandlerResponse::Unhandled;
  if (req.has_param("token") && same(req.get_param_value("token"), p.token)) {
    res.set_header("Set-Cookie", p.cookie + "=" + p.token + "; Path=/; HttpOnly; SameSite=Strict");
    if (req.path != "/") return httplib::Server::HandlerResponse::Unhandled;
    res.set_redirect("/", 303);
    return httplib::Server::HandlerResponse::Handled;
  }
  res.status = 401;
  res.set_header("WWW-Authenticate", "Bearer realm=\"piranha nps\"");
  res.set_content(
      "this live page asks for its token (the file given to nps run --http-token): open /?token=TOKEN "
      "once in a browser, or send the header Authorization: Bearer TOKEN\n",
      "text/plain; charset=utf-8");
  return httplib::Server::HandlerResponse::Handled;
}

void routes(Page& p, std::string html) {
  p.server.set_pre_routing_handler(
      [&p](const httplib::Request& req, httplib::Response& res) { return check_token(p, req, res); });
  p.server.Get("/", [html = std::move(html)](const httplib::Request&, httplib::Response& res) {
    res.set_content(html, "text/html; charset=utf-8");
  });
  p.server.Get("/api/state", [&p](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(p.mu);
    res.set_content(p.state, "application/json");
  });
  p.server.Get("/history", [&p](const httplib::Request& req, httplib::Response& res) {
    // since= absent or not a number: everything the program keeps.
    double since = -std::numeric_limits<double>::infinity();
    if (req.has_param("since")) {
      const std::string text = req.get_param_value("since");
      char* end = nullptr;
      const double t = std::strtod(text.c_str(), &end);
      if (end != text.c_str() && *end == '\0' && std::isfinite(t)) since = t;
    }
    std::size_t size = 0;
    char* json = p.history ? p.history(p.history_context, since, &size) : nullptr;
    if (!json) {
      res.status = 503;
      res.set_content("the live page's history cannot be made now\n", "text/plain; charset=utf-8");
      return;
    }
    std::unique_ptr<char, decltype(&std::free)> owned(json, &std::free);
    res.set_content(std::string(json, size), "application/json");
  });
  p.server.Get("/events", [&p](const httplib::Request&, httplib::Response& res) {
    // A stream holds a worker for as long as it is open: past the cap it is
    // refused at once, so open streams never leave the page and /api/state
    // without a worker (a browser's EventSource does not retry a 503; the
    // page then polls /api/state).
    auto slot = StreamSlot::take(p);
    if (!slot) {
      res.status = 503;
      res.set_header("Retry-After", "30");
      res.set_content("the live page serves at most " + std::to_string(p.max_streams) +
                          " event streams at once and all are open: close a page that shows it, or read "
                          "/api/state\n",
                      "text/plain; charset=utf-8");
      return;
    }
    res.set_header("Cache-Control", "no-cache");
    auto sent = std::make_shared<std::uint64_t>(~std::uint64_t{0});
    // The provider holds the slot: it is given back when the response, and
    // so every copy of the provider, is gone, however the stream ended.
    res.set_chunked_content_provider("text/event-stream", [&p, sent, slot](std::size_t,
                                                                           httplib::DataSink& sink) {
      std::string out;
      {
        std::unique_lock lock(p.mu);
        // A new state, or a comment every second: a gone client fails the write.
        p.changed.wait_for(lock, std::chrono::seconds(1), [&] { return p.stopping || p.version != *sent; });
        if (p.stopping) return false;
        if (p.version != *sent) {
          out = "data: " + p.state + "\n\n";
          *sent = p.version;
        } else {
          out = ": still here\n\n";
        }
      }
      return sink.write(out.data(), out.size());
    });
  });
  p.server.set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404)
      res.set_content(
          "no such page: " + utf8(req.path) + " (the NPS serves /, /api/state, /history and /events)\n",
          "text/plain; charset=utf-8");
  });
}

void set_error(char* error, std::size_t size, const std::string& message) {
  if (error && size > 0) std::snprintf(error, size, "%s", message.c_str());
}

}  // namespace

extern "C" {

void* piranha_nps_page_open(const char* host, int port, const char* html, const char* token, int max_streams,
                            piranha_nps_page_history history, void* context, int* bound, char* error,
                            std::size_t error_size) {
  try {
    auto p = std::make_unique<Page>();
    p->token = token ? token : "";
    p->history = history;
    p->history_context = context;
    p->max_streams = std::max(0, max_streams);
    const auto workers = static_cast<std::size_t>(p->max_streams + kOtherWorkers);
    p->server.new_task_queue = [workers] { return new httplib::ThreadPool(workers); };
    routes(*p, html);
    int listening = 0;
    if (port == 0)
      listening = p->server.bind_to_any_port(host);
    else if (p->server.bind_to_port(host, port))
      listening = port;
    if (listening <= 0) {
      set_error(error, error_size, "cannot listen there (in use, or not this host's address)");
      return nullptr;
    }
    p->cookie = "piranha_nps_" + std::to_string(listening);
    Page* raw = p.get();
    // The serving thread and the workers it starts take no signals: a
    // SIGTERM meant for the program (its own watcher stops it cleanly) must
    // not land on one of them and end the process by default.
    sigset_t all, before;
    sigfillset(&all);
    pthread_sigmask(SIG_BLOCK, &all, &before);
    try {
      p->thread = std::thread([raw] {
        raw->server.listen_after_bind();
        raw->ended = true;
      });
    } catch (...) {
      pthread_sigmask(SIG_SETMASK, &before, nullptr);
      throw;
    }
    pthread_sigmask(SIG_SETMASK, &before, nullptr);
    // Until it serves: a stop before that would not reach the thread, and
    // close would wait for it for ever (cpp-httplib 0.11).
    while (!p->server.is_running() && !p->ended) std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (!p->server.is_running()) {
      p->thread.join();
      set_error(error, error_size, "the HTTP server stopped as it started");
      return nullptr;
    }
    *bound = listening;
    return p.release();
  } catch (const std::exception& e) {
    set_error(error, error_size, e.what());
  } catch (...) {
    set_error(error, error_size, "the HTTP server could not start");
  }
  return nullptr;
}

void piranha_nps_page_set_state(void* page, const char* json, std::size_t size) {
  auto* p = static_cast<Page*>(page);
  try {
    std::lock_guard lock(p->mu);
    p->state.assign(json, size);
    ++p->version;
  } catch (...) {
    return;  // out of memory: the page keeps the last state
  }
  p->changed.notify_all();
}

void piranha_nps_page_close(void* page) {
  std::unique_ptr<Page> p(static_cast<Page*>(page));
  try {
    {
      std::lock_guard lock(p->mu);
      p->stopping = true;
    }
    p->changed.notify_all();
    p->server.stop();
    if (p->thread.joinable()) p->thread.join();
  } catch (...) {
    // A thread that cannot be joined: left to end with the process.
    if (p->thread.joinable()) p->thread.detach();
    p.release();
  }
}

int piranha_nps_page_interface() {
  return piranha::nps::kPageInterface;
}

}  // extern "C"

// The NPS's live page (seed 003 §9.1's visualizer): which node runs which
// job right now, each node's state, the queue with each job's progress,
// retreats as they happen, and the scheduler obeyed -- one page with its
// script and style inline (no external assets), kept current by
// server-sent events. `piranha nps run --http ADDRESS` serves it.
//
//   GET /            the page
//   GET /api/state   the state as JSON (live_state's output)
//   GET /history?since=T  the page's history from wall time T on (all
//                    that is kept without since=): Timeline::history's
//                    JSON (timeline.h), fed by every state published and
//                    by seed()
//   GET /events      server-sent events: one `data: STATE` per change, a
//                    comment line every second to notice a gone client;
//                    503 with a message when LivePage::kMaxStreams are
//                    open (the page then polls /api/state)
//   anything else    404 with a one-line message
//
// With a token, every request must present it, or is refused with 401 and a
// message: as `Authorization: Bearer TOKEN`, or in the page's cookie
// (piranha_nps_PORT), which a request with `?token=TOKEN` is given (a
// browser opens /?token=TOKEN once; it is redirected to /, and its later
// requests, the event stream's included, carry the cookie).
//
// live_state() and live_page_html() are pure; LivePage is the thin HTTP
// shell: cpp-httplib with its own threads, in the module piranha-nps-page.so
// that the first LivePage loads (src/live_page_module.h says why), found
// beside the program or where the install put it, relative to the program.
#pragma once

#include <chrono>
#include <mutex>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "piranha/nps/pool.h"
#include "piranha/nps/timeline.h"
#include "piranha/trellis/value.h"

namespace piranha::nps {

// The page's state from the NPS's node states (any order; each is
// recognised by its fields: monitors, owners, the jobs node, schedulers,
// the evaluator). `now` is wall seconds. A node's state is its monitor's,
// "owner-blocked" when its owner's block is in force.
nlohmann::json live_state(double now, const std::vector<trellis::Value>& states);

// The page: HTML with inline CSS and JavaScript, no external assets.
std::string live_page_html();

// HOST:PORT as --http takes it; the port from 0 (any free one) to 65535.
// Throws InputError (source "--http") for anything else.
struct HttpAddress {
  std::string host;
  int port = 0;
};
HttpAddress parse_http_address(const std::string& address);

// The page's token, from `file` (`nps run --http-token FILE`): its text,
// without surrounding white space, which must be at least 16 characters
// from A-Z a-z 0-9 - . _ ~ (they stand in a URL as they are). A file that
// does not exist is made, mode 0600, with a new random token of 32
// characters, and `*made` is set. Throws InputError (source "--http-token")
// for a file its group or others may read (as a secret key file is
// refused), an unreadable or unwritable one, or a token not so made.
std::string page_token(const std::string& file, bool* made);

class LivePage {
 public:
  // Event streams served at once. Each holds one of the server's workers;
  // the server has eight more than this, so every other request finds one.
  static constexpr int kMaxStreams = 16;

  // Serves on `address` ("127.0.0.1:8080"; port 0 picks a free one), asking
  // every request for `token` unless it is empty. Throws InputError (source
  // "--http") for a malformed address and std::runtime_error when it cannot
  // listen there or its module cannot be loaded (the message says where it
  // was looked for).
  explicit LivePage(const std::string& address, const std::string& token = "");
  // Stops serving; open event streams end.
  ~LivePage();
  LivePage(const LivePage&) = delete;
  LivePage& operator=(const LivePage&) = delete;

  // The port it listens on.
  int port() const { return port_; }
  // A new state for /api/state and every event stream: sent at once when
  // it differs from the last one in more than its "time", else at most once
  // a second; the history observes each state sent. Thread-safe.
  void publish(const nlohmann::json& state);
  // The evaluator's records (Pool::records(), oldest first) for the
  // history: what earlier NPS runs saw. Before the first publish().
  // Thread-safe.
  void seed(std::span<const EvalRecord> records);

 private:
  static char* history_text(void* page, double since, std::size_t* size);

  void* page_ = nullptr;  // the module's page (live_page_server.cc)
  int port_ = 0;
  std::mutex mu_;
  std::string content_;  // the last state sent, without its time
  std::chrono::steady_clock::time_point published_;
  std::mutex history_mu_;  // apart from mu_: /history is answered while states are published
  Timeline history_;
};

}  // namespace piranha::nps

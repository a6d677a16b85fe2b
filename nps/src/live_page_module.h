// The interface between LivePage (live_page.cc, in the program) and the live
// page's HTTP server, the module piranha-nps-page.so (live_page_server.cc):
// both include this, so their signatures cannot drift apart. Internal.
//
// The module is built as its own shared object because Debian's
// libcpp-httplib initialises OpenSSL when it is loaded, about 7 ms of every
// start of every process that links it; linked into `piranha`, every command
// paid it. The module is loaded (dlopen) when a page is asked for, and kept
// loaded until the process ends.
//
// No C++ exception crosses this interface: every function catches.
#pragma once

#include <cstddef>

extern "C" {

// The page's history since `since` (wall seconds) as JSON text, in a buffer
// allocated with malloc that the module frees with free(), its length in
// `*size`; null when it cannot be made. Called from the server's threads,
// with `context` as given to open; must not throw.
typedef char* (*piranha_nps_page_history)(void* context, double since, std::size_t* size);

// Serves `html` at /, the last state at /api/state, each new state at
// /events and what `history` gives at /history?since=T on host:port (port
// 0: a free one), its own thread serving until close; its threads block
// every signal (the program takes its own). With
// a `token` (not null or empty), every request must present it (live_page.h
// says how) or is refused with 401. At most `max_streams` event streams are
// open at once: one more is refused with 503 and a message, and the server
// keeps workers beyond them for every other request. Returns once it
// listens, with the port in `*bound`; null, with a message in `error` (at
// most `error_size` bytes with its NUL), when it cannot listen there.
void* piranha_nps_page_open(const char* host, int port, const char* html, const char* token, int max_streams,
                            piranha_nps_page_history history, void* context, int* bound, char* error,
                            std::size_t error_size);

// The new state (JSON text): /api/state answers it, every event stream sends
// it. Thread-safe. Out of memory, the page keeps the last state.
void piranha_nps_page_set_state(void* page, const char* json, std::size_t size);

// Stops serving, ends the event streams, frees the page.
void piranha_nps_page_close(void* page);

// The version of this interface; the program refuses a module of another.
int piranha_nps_page_interface();

}  // extern "C"

namespace piranha::nps {
constexpr int kPageInterface = 4;
}

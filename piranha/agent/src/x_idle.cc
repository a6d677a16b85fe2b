#include <dlfcn.h>

#include <cstdlib>

#include "piranha/agent/sensors.h"

namespace piranha {
namespace {

// The few Xlib / libXss declarations XIdle needs, written out here because the
// headers are deliberately not a build dependency. These are the stable ABI of
// libX11.so.6 and libXss.so.1.
struct Display;
using Window = unsigned long;
struct XScreenSaverInfo {
  Window window;
  int state;
  int kind;
  unsigned long til_or_since;
  unsigned long idle;  // milliseconds since the last input event
  unsigned long event_mask;
};
using IOErrorHandler = int (*)(Display*);
using IOErrorExitHandler = void (*)(Display*, void*);

struct XLibrary {
  Display* (*open_display)(const char*) = nullptr;
  int (*close_display)(Display*) = nullptr;
  Window (*default_root_window)(Display*) = nullptr;
  int (*free)(void*) = nullptr;
  IOErrorHandler (*set_io_error_handler)(IOErrorHandler) = nullptr;
  void (*set_io_error_exit_handler)(Display*, IOErrorExitHandler, void*) = nullptr;
  int (*query_extension)(Display*, int*, int*) = nullptr;
  XScreenSaverInfo* (*alloc_info)() = nullptr;
  int (*query_info)(Display*, Window, XScreenSaverInfo*) = nullptr;
  bool loaded = false;
};

template <typename F>
bool bind(void* lib, const char* name, F& f) {
  f = reinterpret_cast<F>(::dlsym(lib, name));
  return f != nullptr;
}

// Loaded once per process and never unloaded: Xlib keeps global state.
const XLibrary& xlib() {
  static const XLibrary lib = [] {
    XLibrary l;
    void* x11 = ::dlopen("libX11.so.6", RTLD_LAZY | RTLD_LOCAL);
    void* xss = x11 ? ::dlopen("libXss.so.1", RTLD_LAZY | RTLD_LOCAL) : nullptr;
    if (!xss) return l;
    l.loaded = bind(x11, "XOpenDisplay", l.open_display) && bind(x11, "XCloseDisplay", l.close_display) &&
               bind(x11, "XDefaultRootWindow", l.default_root_window) && bind(x11, "XFree", l.free) &&
               bind(x11, "XSetIOErrorHandler", l.set_io_error_handler) &&
               bind(x11, "XSetIOErrorExitHandler", l.set_io_error_exit_handler) &&
               bind(xss, "XScreenSaverQueryExtension", l.query_extension) &&
               bind(xss, "XScreenSaverAllocInfo", l.alloc_info) &&
               bind(xss, "XScreenSaverQueryInfo", l.query_info);
    if (l.loaded) {
      // Xlib's default handler prints to stderr; the exit handler below
      // decides what happens next.
      l.set_io_error_handler([](Display*) { return 0; });
    }
    return l;
  }();
  return lib;
}

}  // namespace

struct XIdle::Connection {
  Display* display = nullptr;
  XScreenSaverInfo* info = nullptr;
  bool lost = false;
};

XIdle::XIdle(std::string display) : display_(std::move(display)) {}

XIdle::~XIdle() {
  if (!conn_) return;
  const XLibrary& x = xlib();
  x.free(conn_->info);
  // After an I/O error the display must not be used again, not even to close it.
  if (!conn_->lost) x.close_display(conn_->display);
}

std::optional<double> XIdle::idle_seconds() {
  if (conn_ && conn_->lost) {
    // The Display is abandoned, not closed: closing it would talk to the dead
    // server again.
    xlib().free(conn_->info);
    conn_.reset();
  }
  if (!conn_) {
    auto now = Clock::now();
    if (last_attempt_ && now - *last_attempt_ < std::chrono::seconds(30)) return std::nullopt;
    last_attempt_ = now;
    const char* name = display_.empty() ? std::getenv("DISPLAY") : display_.c_str();
    if (!name || !*name) return std::nullopt;
    const XLibrary& x = xlib();
    if (!x.loaded) return std::nullopt;
    Display* d = x.open_display(name);
    if (!d) return std::nullopt;
    int event_base = 0, error_base = 0;
    XScreenSaverInfo* info = x.query_extension(d, &event_base, &error_base) ? x.alloc_info() : nullptr;
    if (!info) {
      x.close_display(d);
      return std::nullopt;
    }
    conn_ = std::make_unique<Connection>(Connection{d, info, false});
    // Instead of exit(), which is what Xlib does after an I/O error by default.
    x.set_io_error_exit_handler(
        d, [](Display*, void* c) { static_cast<Connection*>(c)->lost = true; }, conn_.get());
  }
  const XLibrary& x = xlib();
  if (!x.query_info(conn_->display, x.default_root_window(conn_->display), conn_->info) || conn_->lost)
    return std::nullopt;
  return static_cast<double>(conn_->info->idle) / 1000.0;
}

}  // namespace piranha

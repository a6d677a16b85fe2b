// LivePage (live_page.h): the address checked here, the HTTP server loaded
// from the module piranha-nps-page.so (live_page_module.h says why and
// states the interface).
#include "piranha/nps/live_page.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <vector>

#include "live_page_module.h"
#include "piranha/base/input_error.h"

#ifndef PIRANHA_NPS_PAGE_MODULE_DIR
#define PIRANHA_NPS_PAGE_MODULE_DIR "../libexec/piranha"
#endif

namespace piranha::nps {

namespace {

constexpr const char* kModule = "piranha-nps-page.so";

struct Module {
  decltype(&piranha_nps_page_open) open = nullptr;
  decltype(&piranha_nps_page_set_state) set_state = nullptr;
  decltype(&piranha_nps_page_close) close = nullptr;
};

template <typename F>
F symbol(void* handle, const char* name) {
  return reinterpret_cast<F>(::dlsym(handle, name));
}

// The module, loaded once and kept: beside this program (the build tree), or
// where the install put it, relative to this program's directory.
const Module& module() {
  static const Module m = [] {
    std::error_code ec;
    const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec)
      throw std::runtime_error(
          std::string("the live page's module ") + kModule +
          " is found from this program's path, which /proc/self/exe does not give: " + ec.message());
    const auto dir = self.parent_path();
    const std::vector<std::filesystem::path> tried = {
        dir / kModule, (dir / PIRANHA_NPS_PAGE_MODULE_DIR / kModule).lexically_normal()};
    std::string why;  // why files that are there were not taken
    for (const auto& path : tried) {
      if (!std::filesystem::exists(path, ec)) continue;
      void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
      if (!handle) {
        why += std::string("; ") + ::dlerror();
        continue;
      }
      auto version = symbol<decltype(&piranha_nps_page_interface)>(handle, "piranha_nps_page_interface");
      Module found{symbol<decltype(found.open)>(handle, "piranha_nps_page_open"),
                   symbol<decltype(found.set_state)>(handle, "piranha_nps_page_set_state"),
                   symbol<decltype(found.close)>(handle, "piranha_nps_page_close")};
      if (version && version() == kPageInterface && found.open && found.set_state && found.close)
        return found;
      ::dlclose(handle);
      why += "; " + path.string() + " is not this program's page module (another build or version)";
    }
    throw std::runtime_error(std::string("the live page's module ") + kModule +
                             (why.empty() ? " is not installed" : " cannot be loaded") + " (looked in " +
                             tried[0].parent_path().string() + " and " + tried[1].parent_path().string() +
                             why + ")");
  }();
  return m;
}

}  // namespace

std::string page_token(const std::string& file, bool* made) {
  if (made) *made = false;
  const int fd = ::open(file.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd >= 0) {
    unsigned char bytes[16];
    std::string token;
    const bool random = ::getrandom(bytes, sizeof bytes, 0) == static_cast<ssize_t>(sizeof bytes);
    for (unsigned char b : bytes) {
      token += "0123456789abcdef"[b >> 4];
      token += "0123456789abcdef"[b & 15];
    }
    const std::string text = token + "\n";
    const bool written = random && ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    if (::close(fd) != 0 || !written) {
      ::unlink(file.c_str());
      throw InputError("--http-token", file + ": cannot write a new token there");
    }
    if (made) *made = true;
    return token;
  }
  if (errno != EEXIST)
    throw InputError("--http-token", file + ": cannot make a token file there: " + std::strerror(errno));
  struct stat st {};
  if (::stat(file.c_str(), &st) == 0 && (st.st_mode & 077) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%04o", static_cast<unsigned>(st.st_mode & 07777));
    throw InputError("--http-token", file + ": a token file that its group or others may read (mode " + mode +
                                         ") is not used: chmod 600 " + file);
  }
  std::ifstream in(file);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (!in.good() && !in.eof()) throw InputError("--http-token", file + ": cannot read it");
  const auto first = text.find_first_not_of(" \t\r\n"), last = text.find_last_not_of(" \t\r\n");
  const std::string token = first == std::string::npos ? "" : text.substr(first, last - first + 1);
  const bool plain = std::all_of(token.begin(), token.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '.' || c == '_' || c == '~';
  });
  if (token.size() < 16 || !plain)
    throw InputError("--http-token",
                     file +
                         ": the token must be at least 16 characters from A-Z a-z 0-9 - . _ ~ "
                         "(remove the file and a new one is made)");
  return token;
}

HttpAddress parse_http_address(const std::string& address) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw InputError("--http", "\"" + address + "\" is not HOST:PORT (e.g. 127.0.0.1:8080)");
  const std::string host = address.substr(0, colon), port_text = address.substr(colon + 1);
  int port = -1;
  try {
    std::size_t used = 0;
    port = std::stoi(port_text, &used);
    if (used != port_text.size()) port = -1;
  } catch (const std::exception&) {
    port = -1;
  }
  if (port < 0 || port > 65535)
    throw InputError("--http", "\"" + address + "\": the port must be a number from 0 to 65535");
  return HttpAddress{host, port};
}

LivePage::LivePage(const std::string& address, const std::string& token) {
  const auto [host, port] = parse_http_address(address);
  const Module& m = module();
  char error[256] = "";
  page_ = m.open(host.c_str(), port, live_page_html().c_str(), token.c_str(), kMaxStreams, &history_text,
                 this, &port_, error, sizeof error);
  if (!page_) throw std::runtime_error("--http " + address + ": " + error);
}

LivePage::~LivePage() {
  if (page_) module().close(page_);
}

char* LivePage::history_text(void* page, double since, std::size_t* size) {
  try {
    auto* self = static_cast<LivePage*>(page);
    std::string text;
    {
      std::lock_guard lock(self->history_mu_);
      text = self->history_.history(since).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    }
    char* out = static_cast<char*>(std::malloc(text.size() + 1));
    if (!out) return nullptr;
    std::memcpy(out, text.data(), text.size() + 1);
    *size = text.size();
    return out;
  } catch (...) {
    return nullptr;  // no exception crosses into the module
  }
}

void LivePage::seed(std::span<const EvalRecord> records) {
  std::lock_guard lock(history_mu_);
  history_.seed(records);
}

void LivePage::publish(const nlohmann::json& state) {
  // A change is sent at once; the clock alone ("time") once a second.
  nlohmann::json content = state;
  content.erase("time");
  std::string text = content.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  const auto now = std::chrono::steady_clock::now();
  {
    std::lock_guard lock(mu_);
    if (text == content_ && now - published_ < std::chrono::seconds(1)) return;
    content_ = std::move(text);
    published_ = now;
    {
      std::lock_guard history_lock(history_mu_);
      history_.observe(state);
    }
    const std::string full = state.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    // Under the lock: two publishers' states reach the page in their order.
    module().set_state(page_, full.data(), full.size());
  }
}

}  // namespace piranha::nps

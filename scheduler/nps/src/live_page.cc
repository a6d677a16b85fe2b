// LivePage (live_page.h): the HTTP shell around the live page.
#include "piranha/nps/live_page.h"

#include <httplib.h>

#include <stdexcept>

namespace piranha::nps {

LivePage::LivePage(const std::string& address) : server_(std::make_unique<httplib::Server>()) {
  const auto colon = address.rfind(':');
  if (colon == std::string::npos || colon == 0)
    throw std::invalid_argument("--http \"" + address + "\": expected HOST:PORT, e.g. 127.0.0.1:8080");
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
    throw std::invalid_argument("--http \"" + address + "\": the port must be a number from 0 to 65535");

  const std::string page = live_page_html();
  server_->Get("/", [page](const httplib::Request&, httplib::Response& res) {
    res.set_content(page, "text/html; charset=utf-8");
  });
  server_->Get("/api/state", [this](const httplib::Request&, httplib::Response& res) {
    std::lock_guard lock(mu_);
    res.set_content(state_, "application/json");
  });
  server_->Get("/events", [this](const httplib::Request&, httplib::Response& res) {
    res.set_header("Cache-Control", "no-cache");
    auto sent = std::make_shared<std::uint64_t>(~std::uint64_t{0});
    res.set_chunked_content_provider("text/event-stream", [this, sent](std::size_t, httplib::DataSink& sink) {
      std::string out;
      {
        std::unique_lock lock(mu_);
        // A new state, or a comment every second: a gone client fails the write.
        changed_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_ || version_ != *sent; });
        if (stopping_) return false;
        if (version_ != *sent) {
          out = "data: " + state_ + "\n\n";
          *sent = version_;
        } else {
          out = ": still here\n\n";
        }
      }
      return sink.write(out.data(), out.size());
    });
  });
  server_->set_error_handler([](const httplib::Request& req, httplib::Response& res) {
    if (res.status == 404)
      res.set_content("no such page: " + req.path + " (the NPS serves /, /api/state and /events)\n",
                      "text/plain; charset=utf-8");
  });
  if (port == 0)
    port_ = server_->bind_to_any_port(host);
  else if (server_->bind_to_port(host, port))
    port_ = port;
  if (port_ <= 0)
    throw std::runtime_error("--http " + address +
                             ": cannot listen there (in use, or not this host's address)");
  thread_ = std::thread([this] { server_->listen_after_bind(); });
}

LivePage::~LivePage() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  changed_.notify_all();
  server_->stop();
  if (thread_.joinable()) thread_.join();
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
    state_ = state.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    ++version_;
  }
  changed_.notify_all();
}

}  // namespace piranha::nps

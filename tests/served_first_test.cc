// A session whose hello asked to be served first (ClientOptions::served_first,
// server.h "Served first") has its requests answered ahead of those that
// waited before them on other connections, and each connection's requests
// keep their own order. The server is frozen with SIGSTOP so that every
// request is waiting in its socket when it resumes.
#include <doctest/doctest.h>

#include <csignal>
#include <memory>
#include <thread>
#include <vector>

#include "harness.h"

namespace piranha::it {
namespace {

using namespace std::chrono_literals;

constexpr int kWrites = 10;  // by each client

// Every ("t", who, k) in space "s", in the order they were written.
std::vector<std::pair<std::int64_t, std::int64_t>> written(ts::Client& c) {
  std::vector<std::pair<std::int64_t, std::int64_t>> order;
  for (const auto& t :
       c.rd_many("s",
                 ts::Template({ts::Field::of(std::string("t")), ts::Field::formal(ts::Type::Int),
                               ts::Field::formal(ts::Type::Int)}),
                 100000))
    order.emplace_back(t.get<std::int64_t>(1), t.get<std::int64_t>(2));
  return order;
}

// 100 clients each post ten writes to a frozen server, then `late` posts
// ten; the server resumes. Returns where late's last write landed among all
// 1,010, and checks each connection's writes kept their order. In the fair
// queue late has one turn in every 101 (its last write lands past 900);
// served first, its writes are answered as soon as the server has read them.
std::size_t place_of_late_writer(bool served_first) {
  ServerProcess server;
  std::vector<std::unique_ptr<ts::Client>> others;
  for (int i = 0; i < 100; ++i) others.push_back(std::make_unique<ts::Client>(server.endpoint()));
  ts::ClientOptions o;
  o.served_first = served_first;
  ts::Client late(server.endpoint(), o);

  server.process().signal(SIGSTOP);
  for (int k = 0; k < kWrites; ++k)
    for (int i = 0; i < 100; ++i)
      others[i]->out_posted("s", ts::Tuple::of("t", std::int64_t{i}, std::int64_t{k}));
  std::this_thread::sleep_for(300ms);  // the others' writes reach the server's socket first
  for (int k = 0; k < kWrites; ++k)
    late.out_posted("s", ts::Tuple::of("t", std::int64_t{-1}, std::int64_t{k}));
  std::this_thread::sleep_for(300ms);
  server.process().signal(SIGCONT);
  for (auto& c : others) c->flush();
  late.flush();

  auto order = written(late);
  REQUIRE(order.size() == 101 * kWrites);
  std::size_t place = order.size();
  std::vector<int> next(101, 0);  // per writer (late is 100), the k it writes next
  for (std::size_t at = 0; at < order.size(); ++at) {
    auto [who, k] = order[at];
    int w = who < 0 ? 100 : static_cast<int>(who);
    CHECK(k == next[w]);  // a connection's own writes in its order
    ++next[w];
    if (who < 0 && k == kWrites - 1) place = at;
  }
  return place;
}

}  // namespace

TEST_CASE("a served-first session's requests are answered before those that waited on other connections") {
  std::size_t place = place_of_late_writer(true);
  MESSAGE("served first: the late writer's last write was number ", place, " of 1,010");
  CHECK(place < 800);
}

TEST_CASE("without served_first the late writer waits its turn in the fair queue") {
  // The anchor of the case above: the same run, with the fair queue alone.
  std::size_t place = place_of_late_writer(false);
  MESSAGE("fair queue: the late writer's last write was number ", place, " of 1,010");
  CHECK(place >= 900);
}

}  // namespace piranha::it

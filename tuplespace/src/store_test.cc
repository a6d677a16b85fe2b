#include "piranha/tuplespace/store.h"

#include <doctest/doctest.h>

#include <limits>
#include <random>

using namespace piranha::ts;

namespace {

template <class... Ts>
TupleImage tup(Ts&&... vs) {
  return image_of(Tuple::of(std::forward<Ts>(vs)...));
}

// Builds a template from values and Type formals: tmpl("task", Type::Int).
template <class... Ts>
TemplateImage tmpl(Ts&&... fs) {
  std::vector<Field> fields;
  auto add = [&](auto&& f) {
    if constexpr (std::is_same_v<std::decay_t<decltype(f)>, Type>)
      fields.push_back(Field::formal(f));
    else
      fields.push_back(Field::of(make_value(f)));
  };
  (add(fs), ...);
  return image_of(Template(std::move(fields)));
}

WaitSpec take_now() {
  WaitSpec s;
  s.timeout = 0;
  return s;
}
WaitSpec read_now() {
  WaitSpec s;
  s.timeout = 0;
  s.take = false;
  return s;
}
WaitSpec blocking(ClientId c, std::uint64_t rid, bool take = true, Millis timeout = kForever.count()) {
  WaitSpec s;
  s.client = c;
  s.request_id = rid;
  s.take = take;
  s.timeout = timeout;
  return s;
}

Tuple decoded(const std::optional<Taken>& t) {
  REQUIRE(t.has_value());
  return decode_tuple(t->tuple);
}

std::vector<Delivery> drain(Store& st) {
  std::vector<Delivery> d;
  st.take_deliveries(d);
  return d;
}

}  // namespace

TEST_CASE("in returns the oldest matching tuple") {
  Store st;
  st.out("s", tup("task", 1), 0);
  st.out("s", tup("task", 2), 0);
  st.out("s", tup("task", 3), 0);
  CHECK(decoded(st.in("s", tmpl("task", Type::Int), take_now(), 0)) == Tuple::of("task", 1));
  CHECK(decoded(st.in("s", tmpl("task", Type::Int), take_now(), 0)) == Tuple::of("task", 2));
  CHECK(decoded(st.in("s", tmpl("task", Type::Int), take_now(), 0)) == Tuple::of("task", 3));
  CHECK_FALSE(st.in("s", tmpl("task", Type::Int), take_now(), 0).has_value());
}

TEST_CASE("oldest-first holds across field-0 values when field 0 is a formal") {
  Store st;
  st.out("s", tup("b", 1), 0);
  st.out("s", tup("a", 2), 0);
  st.out("s", tup("b", 3), 0);
  for (int want : {1, 2, 3})
    CHECK(decoded(st.in("s", tmpl(Type::String, Type::Int), take_now(), 0)).get<std::int64_t>(1) == want);
}

TEST_CASE("actuals beyond field 0 select within a bucket") {
  Store st;
  for (int i = 0; i < 5; ++i) st.out("s", tup("result", i, i * 1.5), 0);
  CHECK(decoded(st.in("s", tmpl("result", 3, Type::Double), take_now(), 0)) == Tuple::of("result", 3, 4.5));
  CHECK(st.stats("s")->tuples == 4);
  CHECK_FALSE(st.in("s", tmpl("result", 3, Type::Double), take_now(), 0).has_value());
}

TEST_CASE("rd copies and leaves the tuple") {
  Store st;
  st.out("s", tup("x", 1), 0);
  CHECK(decoded(st.in("s", tmpl("x", Type::Int), read_now(), 0)) == Tuple::of("x", 1));
  CHECK(st.stats("s")->tuples == 1);
}

TEST_CASE("types are strict: int never matches double") {
  Store st;
  st.out("s", tup("n", 3.0), 0);
  CHECK_FALSE(st.in("s", tmpl("n", 3), take_now(), 0).has_value());
  CHECK_FALSE(st.in("s", tmpl("n", Type::Int), take_now(), 0).has_value());
  CHECK(st.in("s", tmpl("n", 3.0), take_now(), 0).has_value());
}

TEST_CASE("spaces are separate and counted") {
  Store st;
  st.out("a", tup("x", 1), 0);
  st.out("b", tup("x", 1), 0);
  st.out("b", tup("x", std::string(100, 'y')), 0);
  CHECK(st.stats("a")->tuples == 1);
  CHECK(st.stats("b")->tuples == 2);
  CHECK(st.stats("b")->bytes > 100);
  CHECK(st.in("a", tmpl("x", Type::Int), take_now(), 0).has_value());
  CHECK_FALSE(st.in("a", tmpl("x", Type::Int), take_now(), 0).has_value());
  CHECK(st.remove("a"));
  CHECK_FALSE(st.remove("a"));
  CHECK_FALSE(st.stats("a").has_value());
  CHECK(st.tuple_count() == 2);
}

TEST_CASE("blocked requests are served in arrival order") {
  Store st;
  CHECK_FALSE(st.in("s", tmpl("t", Type::Int), blocking(1, 10), 0));
  CHECK_FALSE(st.in("s", tmpl(Type::String, Type::Int), blocking(2, 20), 0));
  CHECK_FALSE(st.in("s", tmpl("t", Type::Int), blocking(3, 30), 0));
  st.out("s", tup("t", 1), 1);
  st.out("s", tup("t", 2), 1);
  st.out("s", tup("t", 3), 1);
  auto d = drain(st);
  REQUIRE(d.size() == 3);
  CHECK(d[0].client == 1);
  CHECK(decode_tuple(d[0].tuple) == Tuple::of("t", 1));
  CHECK(d[1].client == 2);
  CHECK(decode_tuple(d[1].tuple) == Tuple::of("t", 2));
  CHECK(d[2].client == 3);
  CHECK(st.tuple_count() == 0);
}

TEST_CASE("readers ahead of a taker get copies, the taker consumes") {
  Store st;
  st.in("s", tmpl("t", Type::Int), blocking(1, 1, false), 0);
  st.in("s", tmpl("t", Type::Int), blocking(2, 2, true), 0);
  st.in("s", tmpl("t", Type::Int), blocking(3, 3, false), 0);
  st.out("s", tup("t", 9), 0);
  auto d = drain(st);
  REQUIRE(d.size() == 2);
  CHECK(d[0].client == 1);
  CHECK(d[1].client == 2);
  CHECK(st.tuple_count() == 0);
  CHECK(st.stats("s")->waiters == 1);  // the reader behind the taker still waits
}

TEST_CASE("a waiter whose later actuals do not match is skipped") {
  Store st;
  st.in("s", tmpl("r", 5), blocking(1, 1), 0);
  st.in("s", tmpl("r", Type::Int), blocking(2, 2), 0);
  st.out("s", tup("r", 4), 0);
  auto d = drain(st);
  REQUIRE(d.size() == 1);
  CHECK(d[0].client == 2);
}

TEST_CASE("waiters time out at their deadline, not before") {
  Store st;
  st.in("s", tmpl("t", Type::Int), blocking(1, 7, true, 100), 1000);
  CHECK(st.next_deadline() == 1100);
  st.advance(1099);
  CHECK(drain(st).empty());
  st.advance(1100);
  auto d = drain(st);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == Delivery::Kind::Timeout);
  CHECK(d[0].request_id == 7);
  st.out("s", tup("t", 1), 1200);
  CHECK(drain(st).empty());
  CHECK(st.tuple_count() == 1);
}

TEST_CASE("an unacknowledged lease returns its tuple to the space") {
  Store st;
  st.out("s", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 500;
  spec.client = 4;
  auto t = st.in("s", tmpl("task", Type::Int), spec, 0);
  REQUIRE(t);
  CHECK(t->lease != 0);
  CHECK(st.stats("s")->tuples == 0);
  CHECK(st.stats("s")->leases == 1);
  st.advance(499);
  CHECK(st.stats("s")->tuples == 0);
  st.advance(500);
  CHECK(st.stats("s")->tuples == 1);
  CHECK_FALSE(st.ack(t->lease, 4));
}

TEST_CASE("ack ends a lease for good, renew postpones it") {
  Store st;
  st.out("s", tup("task", 1), 0);
  st.out("s", tup("task", 2), 0);
  WaitSpec spec = take_now();
  spec.lease = 100;
  auto a = st.in("s", tmpl("task", Type::Int), spec, 0);
  auto b = st.in("s", tmpl("task", Type::Int), spec, 0);
  CHECK(st.ack(a->lease, 0));
  CHECK(st.renew(b->lease, 1000, 0, 50));
  st.advance(500);
  CHECK(st.tuple_count() == 0);
  st.advance(1050);
  CHECK(st.tuple_count() == 1);
  CHECK_FALSE(st.renew(a->lease, 10, 0, 0));
}

TEST_CASE("a returned lease serves a parked waiter") {
  Store st;
  st.out("s", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 100;
  spec.client = 1;
  auto a = st.in("s", tmpl("task", Type::Int), spec, 0);
  st.in("s", tmpl("task", Type::Int), blocking(2, 9), 0);
  st.drop_client(1, 10);
  auto d = drain(st);
  REQUIRE(d.size() == 1);
  CHECK(d[0].client == 2);
  CHECK(decode_tuple(d[0].tuple) == Tuple::of("task", 1));
}

TEST_CASE("dropping a client releases its leases and forgets its waiters and watches") {
  Store st;
  st.out("s", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 100000;
  spec.client = 1;
  st.in("s", tmpl("task", Type::Int), spec, 0);
  st.in("s", tmpl("other", Type::Int), blocking(1, 3), 0);
  st.watch("s", tmpl("task", Type::Int), 1);
  st.drop_client(1, 5);
  CHECK(st.stats("s")->tuples == 1);
  CHECK(st.stats("s")->waiters == 0);
  CHECK(st.stats("s")->watches == 0);
  CHECK(st.stats("s")->leases == 0);
}

TEST_CASE("watches report writes and takes of matching tuples") {
  Store st;
  WatchId w = st.watch("s", tmpl("job", Type::Int), 8);
  st.out("s", tup("job", 1), 0);
  st.out("s", tup("other", 1), 0);
  st.in("s", tmpl("job", Type::Int), read_now(), 0);
  st.in("s", tmpl("job", Type::Int), take_now(), 0);
  auto d = drain(st);
  REQUIRE(d.size() == 2);
  CHECK(d[0].kind == Delivery::Kind::Event);
  CHECK(d[0].watch == w);
  CHECK(d[0].event == WatchEventKind::Written);
  CHECK(d[1].event == WatchEventKind::Taken);
  CHECK(st.unwatch(w, 8));
  CHECK_FALSE(st.unwatch(w, 8));
}

TEST_CASE("a write's events go to exactly the matching watches, in the order they were made") {
  // Watches are filed by field 0 and by one of their actuals (an agent's
  // node); this checks the filing against matching every watch by hand.
  std::mt19937 rng(29);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const std::vector<std::string> heads{"assign", "node", "heartbeat"};
  const std::vector<std::string> names{"ws1", "ws2", "ws3", "ws4"};
  Store st;
  struct Made {
    WatchId id;
    ClientId client;
    Template t;
  };
  std::vector<Made> made;
  auto field = [&](int i, bool formal_ok) -> Field {
    if (formal_ok && pick(3) == 0) return Field::formal(i == 1 ? Type::Int : Type::String);
    return i == 1 ? Field::of(Value(std::int64_t{pick(2)})) : Field::of(Value(names[pick(4)]));
  };
  for (int round = 0; round < 400; ++round) {
    const int what = pick(10);
    if (what < 4 || made.empty()) {
      std::vector<Field> f;
      f.push_back(pick(4) == 0 ? Field::formal(Type::String) : Field::of(Value(heads[pick(3)])));
      f.push_back(field(1, true));
      f.push_back(field(2, true));
      Template t(std::move(f));
      const ClientId c = 1 + pick(5);
      made.push_back({st.watch("s", image_of(t), c), c, t});
    } else if (what == 4) {
      const std::size_t k = pick(static_cast<int>(made.size()));
      CHECK(st.unwatch(made[k].id, made[k].client));
      made.erase(made.begin() + static_cast<std::ptrdiff_t>(k));
    } else if (what == 5) {
      const ClientId c = 1 + pick(5);
      st.drop_client(c, 0);
      std::erase_if(made, [&](const Made& m) { return m.client == c; });
    } else {
      const Tuple t = Tuple::of(heads[pick(3)], std::int64_t{pick(2)}, names[pick(4)]);
      st.out("s", image_of(t), 0);
      std::vector<WatchId> expected;
      for (const auto& m : made)
        if (m.t.matches(t)) expected.push_back(m.id);
      std::vector<WatchId> got;
      for (const auto& d : drain(st))
        if (d.kind == Delivery::Kind::Event) got.push_back(d.watch);
      REQUIRE(got == expected);
    }
  }
  CHECK(st.stats("s")->watches == made.size());
}

TEST_CASE("a large bucket's field index finds what a scan finds, oldest first") {
  // ("assign", scheduler, epoch, node, job) by the thousand: reads and
  // takes by node go through the bucket's index once it is built; each is
  // checked against matching every stored tuple by hand, in arrival order.
  std::mt19937 rng(64);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  Store st;
  std::vector<Tuple> stored;  // arrival order
  auto node = [&] { return "ws" + std::to_string(pick(40)); };
  for (int round = 0; round < 3000; ++round) {
    const int what = pick(10);
    if (what < 5 || stored.size() < 100) {
      Tuple t =
          Tuple::of("assign", std::int64_t{pick(2)}, std::int64_t{round}, node(), std::int64_t{pick(5)});
      st.out("s", image_of(t), 0);
      stored.push_back(t);
      continue;
    }
    std::vector<Field> f{Field::of(Value(std::string("assign"))),
                         pick(2) ? Field::of(Value(std::int64_t{pick(2)})) : Field::formal(Type::Int),
                         Field::formal(Type::Int),
                         pick(4) ? Field::of(Value(node())) : Field::formal(Type::String),
                         Field::formal(Type::Int)};
    const Template t(std::move(f));
    std::vector<Tuple> expected;
    for (const auto& x : stored)
      if (t.matches(x)) expected.push_back(x);
    if (what < 8) {
      std::vector<Tuple> got;
      for (const auto& b : st.rd_many("s", image_of(t), 1000)) got.push_back(decode_tuple(b));
      REQUIRE(got == expected);
    } else {
      auto taken = st.in("s", image_of(t), take_now(), 0);
      REQUIRE(taken.has_value() == !expected.empty());
      if (!taken) continue;
      REQUIRE(decoded(taken) == expected.front());
      stored.erase(std::find(stored.begin(), stored.end(), expected.front()));
    }
  }
  CHECK(st.stats("s")->tuples == stored.size());
}

TEST_CASE("in_many takes up to max, oldest first") {
  Store st;
  for (int i = 0; i < 10; ++i) st.out("s", tup("t", i), 0);
  auto got = st.in_many("s", tmpl("t", Type::Int), 4, 0);
  REQUIRE(got.size() == 4);
  CHECK(decode_tuple(got[0]) == Tuple::of("t", 0));
  CHECK(decode_tuple(got[3]) == Tuple::of("t", 3));
  CHECK(st.in_many("s", tmpl("t", Type::Int), 100, 0).size() == 6);
  CHECK(st.in_many("nowhere", tmpl("t", Type::Int), 100, 0).empty());
}

TEST_CASE("removing a space answers its parked waiters") {
  Store st;
  st.in("s", tmpl("t", Type::Int), blocking(1, 5), 0);
  CHECK(st.remove("s"));
  auto d = drain(st);
  REQUIRE(d.size() == 1);
  CHECK(d[0].kind == Delivery::Kind::SpaceRemoved);
}

TEST_CASE(
    "a waiting in_many parks when nothing matches, and its deliveries say which form of answer it wants") {
  Store st;
  WaitSpec plain = blocking(1, 1);
  WaitSpec leased = blocking(2, 2, true, 50);
  leased.lease = 1000;
  WaitSpec one = blocking(3, 3, true, 50);
  CHECK(st.take_many("s", tmpl("r", Type::Int), 10, plain, 0).empty());
  CHECK(st.take_many("s", tmpl("r", Type::Int), 10, leased, 0).empty());
  CHECK_FALSE(st.in("s", tmpl("r", Type::Int), one, 0));
  CHECK(st.stats("s")->waiters == 3);
  // Served in arrival order, one tuple each, as parked ins are.
  st.out("s", tup("r", 1), 10);
  st.out("s", tup("r", 2), 10);
  auto d = drain(st);
  REQUIRE(d.size() == 2);
  CHECK(d[0].client == 1);
  CHECK(d[0].form == Delivery::Form::List);
  CHECK(d[0].lease == 0);
  CHECK(decode_tuple(d[0].tuple) == Tuple::of("r", 1));
  CHECK(d[1].client == 2);
  CHECK(d[1].form == Delivery::Form::LeasedList);
  CHECK(d[1].lease > 0);
  CHECK(st.held(d[1].lease, 2));
  // The plain in times out as an in; a waiting in_many's timeout is marked too.
  WaitSpec late = blocking(4, 4, true, 20);
  CHECK(st.take_many("s", tmpl("r", Type::Int), 10, late, 40).empty());
  st.advance(60);
  d = drain(st);
  REQUIRE(d.size() == 2);
  CHECK(d[0].kind == Delivery::Kind::Timeout);
  CHECK(d[0].client == 3);
  CHECK(d[0].form == Delivery::Form::One);
  CHECK(d[1].kind == Delivery::Kind::Timeout);
  CHECK(d[1].client == 4);
  CHECK(d[1].form == Delivery::Form::List);
  // With tuples there it takes them at once, up to max, and parks nothing.
  st.out("s", tup("r", 5), 70);
  st.out("s", tup("r", 6), 70);
  st.out("s", tup("r", 7), 70);
  auto now = st.take_many("s", tmpl("r", Type::Int), 2, blocking(5, 5), 70);
  REQUIRE(now.size() == 2);
  CHECK(decode_tuple(now[0].tuple) == Tuple::of("r", 5));
  CHECK(st.stats("s")->waiters == 0);
  CHECK(drain(st).empty());
}

TEST_CASE("unrelated tuples do not slow in: the bucket touched is the same size") {
  // Structural check of the index: with many unrelated tuples present, a take
  // touches only its own bucket, so the unrelated ones remain untouched.
  Store st;
  for (int i = 0; i < 100000; ++i) st.out("s", tup("filler", i, 0.5), 0);
  st.out("s", tup("task", 1), 0);
  CHECK(decoded(st.in("s", tmpl("task", Type::Int), take_now(), 0)) == Tuple::of("task", 1));
  CHECK(st.stats("s")->tuples == 100000);
}

TEST_CASE("only the holder may ack or renew a lease") {
  Store st;
  st.out("s", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 100;
  spec.client = 1;
  auto t = st.in("s", tmpl("task", Type::Int), spec, 0);
  CHECK_FALSE(st.ack(t->lease, 2));
  CHECK_FALSE(st.renew(t->lease, 1000, 2, 0));
  CHECK(st.renew(t->lease, 1000, 1, 0));
  CHECK(st.ack(t->lease, 1));
}

TEST_CASE("huge timeouts and leases mean for ever, not an overflow") {
  Store st;
  const Millis huge = std::numeric_limits<Millis>::max();
  st.in("s", tmpl("t", Type::Int), blocking(1, 1, true, huge), 1000);
  st.out("s", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = huge;
  auto t = st.in("s", tmpl("task", Type::Int), spec, 1000);
  REQUIRE(t);
  st.advance(2000);
  CHECK(drain(st).empty());
  CHECK(st.stats("s")->waiters == 1);
  CHECK(st.stats("s")->leases == 1);
}

TEST_CASE("rd_many copies up to max, oldest first, and leaves the tuples") {
  Store st;
  for (int i = 0; i < 6; ++i) st.out("s", tup("t", i), 0);
  st.out("s", tup("other", 1), 0);
  auto got = st.rd_many("s", tmpl("t", Type::Int), 4);
  REQUIRE(got.size() == 4);
  for (int i = 0; i < 4; ++i) CHECK(decode_tuple(got[i]) == Tuple::of("t", i));
  CHECK(st.rd_many("s", tmpl("t", Type::Int), 100).size() == 6);
  CHECK(st.stats("s")->tuples == 7);
  CHECK(st.rd_many("s", tmpl("t", 3), 10).size() == 1);
  CHECK(st.rd_many("s", tmpl("t", Type::Double), 10).empty());
  CHECK(st.rd_many("nowhere", tmpl("t", Type::Int), 10).empty());
  CHECK_FALSE(st.stats("nowhere").has_value());  // not created
}

TEST_CASE("rd_many merges buckets oldest first when field 0 is a formal") {
  Store st;
  // Interleave field-0 values so each bucket holds every third tuple, and
  // send one tuple round through a lease so it counts as newly written.
  const char* tags[] = {"job", "assign", "node"};
  for (int i = 0; i < 9; ++i) st.out("s", tup(tags[i % 3], i), 0);
  WaitSpec spec = take_now();
  spec.lease = 10;
  auto leased = st.in("s", tmpl("job", 0), spec, 0);
  REQUIRE(leased);
  st.advance(10);  // ("job", 0) returns, now the newest
  auto got = st.rd_many("s", tmpl(Type::String, Type::Int), 100);
  REQUIRE(got.size() == 9);
  for (int i = 1; i < 9; ++i) CHECK(decode_tuple(got[i - 1]).get<std::int64_t>(1) == i);
  CHECK(decode_tuple(got[8]) == Tuple::of("job", 0));
  // Later actuals filter within every bucket; max cuts the merge short.
  st.out("s", tup("job", 100), 0);
  auto some = st.rd_many("s", tmpl(Type::String, 100), 5);
  REQUIRE(some.size() == 1);
  CHECK(decode_tuple(some[0]) == Tuple::of("job", 100));
  auto first3 = st.rd_many("s", tmpl(Type::String, Type::Int), 3);
  REQUIRE(first3.size() == 3);
  CHECK(decode_tuple(first3[0]) == Tuple::of("assign", 1));
  CHECK(decode_tuple(first3[2]) == Tuple::of("job", 3));
}

TEST_CASE("rd_many causes no watch event and serves no waiter") {
  Store st;
  st.out("s", tup("t", 1), 0);
  st.watch("s", tmpl("t", Type::Int), 1);
  CHECK(st.rd_many("s", tmpl("t", Type::Int), 5).size() == 1);
  CHECK(drain(st).empty());
}

TEST_CASE("take_many gives each tuple its own lease") {
  Store st;
  for (int i = 0; i < 5; ++i) st.out("s", tup("task", i), 0);
  auto got = st.take_many("s", tmpl("task", Type::Int), 3, 7, 100, 0);
  REQUIRE(got.size() == 3);
  for (int i = 0; i < 3; ++i) {
    CHECK(decode_tuple(got[i].tuple) == Tuple::of("task", i));
    CHECK(got[i].lease != 0);
  }
  CHECK(got[0].lease != got[1].lease);
  CHECK(got[1].lease != got[2].lease);
  CHECK(st.stats("s")->tuples == 2);
  CHECK(st.stats("s")->leases == 3);

  // Each lease ends on its own: ack one, renew one, let one expire.
  CHECK(st.ack(got[0].lease, 7));
  CHECK(st.renew(got[1].lease, 1000, 7, 50));
  CHECK_FALSE(st.ack(got[2].lease, 8));  // another client's
  st.advance(100);
  CHECK(st.stats("s")->tuples == 3);  // got[2] is back
  CHECK(st.stats("s")->leases == 1);
  st.advance(1050);
  CHECK(st.stats("s")->tuples == 4);
  CHECK(st.stats("s")->leases == 0);
  CHECK(st.take_many("nowhere", tmpl("task", Type::Int), 3, 7, 100, 0).empty());
}

TEST_CASE("take_many's leases return when their client is dropped") {
  Store st;
  for (int i = 0; i < 4; ++i) st.out("s", tup("task", i), 0);
  auto got = st.take_many("s", tmpl("task", Type::Int), 10, 3, 60000, 0);
  CHECK(got.size() == 4);
  CHECK(st.drop_client(3, 1) == 4);
  auto back = st.in_many("s", tmpl("task", Type::Int), 10, 2);
  REQUIRE(back.size() == 4);
  for (int i = 0; i < 4; ++i) CHECK(decode_tuple(back[i]) == Tuple::of("task", i));  // in grant order
}

TEST_CASE("take_many without a lease takes for good") {
  Store st;
  st.out("s", tup("task", 1), 0);
  auto got = st.take_many("s", tmpl("task", Type::Int), 10, 3, 0, 0);
  REQUIRE(got.size() == 1);
  CHECK(got[0].lease == 0);
  CHECK(st.stats("s")->leases == 0);
  CHECK(st.tuple_count() == 0);
}

TEST_CASE("complete ends the lease and writes the tuples in one step") {
  Store st;
  st.out("jobs", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 100;
  spec.client = 5;
  auto t = st.in("jobs", tmpl("task", Type::Int), spec, 0);
  REQUIRE(t);
  st.in("results", tmpl("result", Type::Int), blocking(6, 44), 0);  // a parked master
  WatchId w = st.watch("results", tmpl("result", Type::Int), 6);
  CHECK(st.complete(t->lease, 5, "results", {tup("result", 10), tup("result", 11)}, 1));
  CHECK(st.stats("jobs")->leases == 0);
  // The parked in took the first result; the second is stored. Watches saw both.
  auto d = drain(st);
  REQUIRE(d.size() == 4);
  CHECK((d[0].kind == Delivery::Kind::Event && d[0].watch == w && d[0].event == WatchEventKind::Written));
  CHECK(d[1].event == WatchEventKind::Taken);
  CHECK((d[2].kind == Delivery::Kind::Tuple && d[2].request_id == 44));
  CHECK(decode_tuple(d[2].tuple) == Tuple::of("result", 10));
  CHECK(d[3].event == WatchEventKind::Written);
  CHECK(st.stats("results")->tuples == 1);
  // The lease is over: it never returns, and a second completion writes nothing.
  st.advance(1000);
  CHECK(st.stats("jobs")->tuples == 0);
  CHECK_FALSE(st.complete(t->lease, 5, "results", {tup("result", 12)}, 1000));
  CHECK(st.stats("results")->tuples == 1);
}

TEST_CASE("complete of a lease not held writes nothing") {
  Store st;
  st.out("jobs", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 100;
  spec.client = 5;
  auto t = st.in("jobs", tmpl("task", Type::Int), spec, 0);
  REQUIRE(t);

  SUBCASE("held by another client") {
    CHECK_FALSE(st.complete(t->lease, 6, "results", {tup("result", 1)}, 1));
    CHECK(st.stats("jobs")->leases == 1);  // still held by 5
  }
  SUBCASE("expired") {
    st.advance(100);
    CHECK_FALSE(st.complete(t->lease, 5, "results", {tup("result", 1)}, 100));
    CHECK(st.stats("jobs")->tuples == 1);  // the task is back, for someone else
  }
  SUBCASE("returned when the client was dropped") {
    st.drop_client(5, 1);
    CHECK_FALSE(st.complete(t->lease, 5, "results", {tup("result", 1)}, 1));
  }
  SUBCASE("never granted") {
    CHECK_FALSE(st.complete(t->lease + 1000, 5, "results", {tup("result", 1)}, 1));
  }
  CHECK_FALSE(st.stats("results").has_value());  // not even created
  CHECK(drain(st).empty());
}

TEST_CASE("complete with no tuples is an ack") {
  Store st;
  st.out("jobs", tup("task", 1), 0);
  WaitSpec spec = take_now();
  spec.lease = 100;
  auto t = st.in("jobs", tmpl("task", Type::Int), spec, 0);
  CHECK(st.complete(t->lease, 0, "elsewhere", {}, 0));
  CHECK_FALSE(st.stats("elsewhere").has_value());
  st.advance(200);
  CHECK(st.tuple_count() == 0);
}

TEST_CASE("ended leases and served waiters leave no deadline behind") {
  // A task farm: every task taken under a long lease and completed at once.
  // The deadline index must hold live leases only, not every lease of the
  // last lease length (what made the server grow by ~80 bytes per task).
  Store st;
  WaitSpec spec = take_now();
  spec.lease = 600'000;
  for (int i = 0; i < 10'000; ++i) {
    st.out("s", tup("task", i), i);
    auto t = st.in("s", tmpl("task", Type::Int), spec, i);
    REQUIRE(t);
    CHECK(st.complete(t->lease, 0, "s", {tup("result", i)}, i));
  }
  CHECK(st.deadline_entries() == 0);
  // A renewed lease has one entry, and none once acked.
  st.out("s", tup("task", 1), 0);
  auto held = st.in("s", tmpl("task", Type::Int), spec, 0);
  REQUIRE(held);
  for (int i = 1; i <= 100; ++i) CHECK(st.renew(held->lease, 1000, 0, i));
  CHECK(st.deadline_entries() == 1);
  CHECK(st.ack(held->lease, 0));
  CHECK(st.deadline_entries() == 0);
  // A parked request with a timeout that is served, or whose client goes.
  st.in("s", tmpl("late", Type::Int), blocking(7, 1, true, 5000), 0);
  CHECK(st.deadline_entries() == 1);
  st.out("s", tup("late", 1), 1);
  CHECK(st.deadline_entries() == 0);
  st.in("s", tmpl("late", Type::Int), blocking(7, 2, true, 5000), 0);
  auto leased = st.in("s", tmpl("result", Type::Int), spec, 0);
  REQUIRE(leased);
  spec.client = 7;
  CHECK(st.deadline_entries() == 2);
  st.drop_client(7, 10);
  st.drop_client(0, 10);
  CHECK(st.deadline_entries() == 0);
  // Expiry itself still works after all that bookkeeping.
  auto again = st.in("s", tmpl("result", Type::Int), spec, 20);
  REQUIRE(again);
  st.advance(20 + 600'000);
  CHECK(st.deadline_entries() == 0);
  CHECK(st.rd_many("s", tmpl("result", Type::Int), 100000).size() == 10000);
}

TEST_CASE("complete_all ends every lease and writes the tuples, or changes nothing") {
  Store st;
  for (int i = 0; i < 4; ++i) st.out("jobs", tup("task", i), 0);
  WaitSpec spec = take_now();
  spec.lease = 1000;
  spec.client = 5;
  auto taken = st.take_many("jobs", tmpl("task", Type::Int), 3, 5, 1000, 0);
  REQUIRE(taken.size() == 3);
  std::vector<LeaseId> leases;
  for (const auto& t : taken) leases.push_back(t.lease);
  auto other = st.in("jobs", tmpl("task", Type::Int), spec, 0);  // client 5's fourth
  REQUIRE(other);

  SUBCASE("one lease not held: nothing ends, nothing is written") {
    auto all = leases;
    all.push_back(999);
    CHECK(st.complete_all(all, 5, "marks", {tup("taken", 1)}, 1) == std::optional<LeaseId>(999));
    CHECK(st.stats("jobs")->leases == 4);
    CHECK_FALSE(st.stats("marks").has_value());
    // Another client's leases are not held either, nor a lease named twice.
    CHECK(st.complete_all(leases, 6, "marks", {}, 1) == std::optional<LeaseId>(leases[0]));
    CHECK(st.complete_all({leases[0], leases[0]}, 5, "marks", {}, 1) == std::optional<LeaseId>(leases[0]));
    CHECK(st.stats("jobs")->leases == 4);
  }
  SUBCASE("all held: all end, the tuples are written, the leases never return") {
    CHECK_FALSE(st.complete_all(leases, 5, "marks", {tup("taken", 1)}, 1).has_value());
    CHECK(st.stats("jobs")->leases == 1);
    CHECK(st.stats("marks")->tuples == 1);
    st.advance(5000);
    CHECK(st.stats("jobs")->tuples == 1);  // only the fourth, returned
    CHECK(st.deadline_entries() == 0);
  }
}

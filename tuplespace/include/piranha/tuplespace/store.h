// Store: the matching engine behind a tuple-space server.
//
// A Store holds named spaces of tuples, parked blocking requests ("waiters"),
// leases and watches. It performs no I/O and reads no clock: callers pass the
// current time in milliseconds, and collect what must be sent to clients
// (woken waiters, timeouts, watch events) with take_deliveries(). That keeps it
// deterministic and unit-testable without sockets or sleeps.
//
// Guarantees:
//  - Among tuples matching a template, the oldest (first written) is returned.
//    A tuple returned to a space by an expired or dropped lease counts as newly
//    written.
//  - Blocked requests are served in arrival order: a new tuple goes to the
//    earliest-parked matching waiter; readers (rd) ahead of it receive a copy
//    first, the first taker (in) consumes it.
//  - Lookup never scans unrelated tuples: tuples are indexed by space,
//    signature (arity and field types) and field 0's value. A template whose
//    field 0 is an actual touches one index bucket; one whose field 0 is a
//    formal touches one bucket per distinct field-0 value of its signature.
//    Within a bucket, tuples are tried oldest first against the template's
//    remaining actual fields.
//
// Durability: a Store given a Journal reports every change to the set of
// stored tuples to it, in order, before the call that made the change returns
// (see Journal). Waiters, watches and leases are not journalled: they belong
// to client sessions.
//
// Not thread-safe: the server owns its Store on one thread.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "piranha/tuplespace/codec.h"

namespace piranha::ts {

using ClientId = std::uint64_t;
using LeaseId = std::uint64_t;
using WatchId = std::uint64_t;
// Times and lengths the store is given, in milliseconds (the wire's unit).
using Millis = std::int64_t;

// A timeout that never ends (-1 ms on the wire).
inline constexpr std::chrono::milliseconds kForever{-1};

// What a watch reports: a matching tuple was written (out, or returned by a
// lease) or taken (in, inp, in_many, or taken under a lease).
enum class WatchEventKind : std::uint8_t { Written, Taken };

// Something the server must send because of a store operation.
struct Delivery {
  enum class Kind : std::uint8_t {
    Tuple,         // a parked in/rd/in_many is answered with `tuple` (and `lease`)
    Timeout,       // a parked in/rd/in_many reached its deadline
    SpaceRemoved,  // a parked in/rd/in_many's space was removed
    Event,         // a watch fired
  };
  Kind kind = Kind::Tuple;
  ClientId client = 0;
  std::uint64_t request_id = 0;  // for Tuple / Timeout / SpaceRemoved
  std::string space;             // for Tuple and Event
  std::string tuple;             // canonical bytes, for Tuple and Event
  LeaseId lease = 0;             // for Tuple taken under a lease
  bool taken = false;            // for Tuple: removed from the space (in), not copied (rd)
  // For Tuple / Timeout: the form of the answer the parked request wants:
  // one tuple (in/rd), or a list (a waiting in_many), with its lease ids
  // when taken under leases.
  enum class Form : std::uint8_t { One, List, LeasedList };
  Form form = Form::One;
  WatchId watch = 0;  // for Event
  WatchEventKind event = WatchEventKind::Written;
};

// A tuple held under a lease, where it came from and its canonical bytes;
// valid until the next call that changes the Store.
struct HeldTuple {
  std::string_view space;
  std::string_view tuple;
};

// A tuple handed out by take/read, with its lease when taken under one.
struct Taken {
  std::string tuple;
  LeaseId lease = 0;
};

// Per-space figures.
struct SpaceStats {
  std::string name;
  std::uint64_t tuples = 0;
  std::uint64_t bytes = 0;  // sum of stored tuples' canonical sizes
  std::uint64_t waiters = 0;
  std::uint64_t leases = 0;
  std::uint64_t watches = 0;
};

// A blocking request: who asked, and how.
struct WaitSpec {
  ClientId client = 0;
  std::uint64_t request_id = 0;
  bool take = true;                   // in (true) or rd (false)
  Millis timeout = kForever.count();  // 0: do not park; kForever: no deadline
  Millis lease = 0;                   // > 0: take under a lease of this length
  bool many = false;  // an in_many that waits (set by take_many): answered as a list (Delivery::form)
};

// What a Store tells a durable log. A tuple is named by its write sequence
// number, unique over the life of the Store and of any Store resumed from the
// same journal (see Store::resume_numbering). A leased tuple is still stored
// for the journal until its lease is acked or completed: if the server
// restarts, it is back in its space. Calls arrive in the order of the changes.
class Journal {
 public:
  virtual ~Journal() = default;
  // `tuple` (canonical bytes) was written to `space` as number `seq`.
  virtual void put(std::uint64_t seq, std::string_view space, std::string_view tuple) = 0;
  // Tuple `seq` is gone for good: taken without a lease, or its lease was
  // acked or completed.
  virtual void erase(std::uint64_t seq) = 0;
  // Tuple `from` came back from an expired or dropped lease as number `to`
  // (it counts as newly written).
  virtual void renumber(std::uint64_t from, std::uint64_t to) = 0;
  // `space` was removed with all its tuples, leased ones too.
  virtual void drop_space(std::string_view space) = 0;
};

class Store {
 public:
  Store();
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  // Writes `t` to `space`, creating the space on first use. The tuple first
  // serves parked waiters in arrival order; if none takes it, it is stored.
  void out(std::string_view space, TupleImage t, Millis now);

  // Tries to satisfy an in/rd now. On a match, returns the tuple (taken, or
  // copied for rd; taken under a lease when spec.lease > 0). Otherwise parks
  // a waiter unless spec.timeout == 0, and returns nullopt; a parked waiter
  // is later answered through a Delivery.
  std::optional<Taken> in(std::string_view space, const TemplateImage& tmpl, const WaitSpec& spec,
                          Millis now);

  // An in_many that may wait: takes up to `max` matching tuples now, as
  // take_many() below does for spec.client under spec.lease. When none
  // matches and spec.timeout != 0, parks a waiter as in() does (creating the
  // space) and returns nothing: it is answered by the first matching tuple
  // written, alone, through a Delivery of form List or LeasedList, or by its
  // timeout (an empty list) or the space's removal.
  std::vector<Taken> take_many(std::string_view space, const TemplateImage& tmpl, std::size_t max,
                               const WaitSpec& spec, Millis now);

  // Takes up to `max` matching tuples, oldest first, without blocking. Does
  // not create the space.
  std::vector<std::string> in_many(std::string_view space, const TemplateImage& tmpl, std::size_t max,
                                   Millis now);

  // in_many under leases: takes up to `max` matching tuples, oldest first,
  // without blocking, each under its own lease of `lease` ms (> 0) held by
  // `client`, exactly as if each had been taken by in() with that lease. The
  // result is in taking order; every entry has a distinct lease id. With
  // lease <= 0 it takes without leases (lease ids 0), like in_many().
  std::vector<Taken> take_many(std::string_view space, const TemplateImage& tmpl, std::size_t max,
                               ClientId client, Millis lease, Millis now);

  // Copies up to `max` matching tuples, oldest first, without blocking and
  // without removing them (Linda's copy-collect). Does not create the space;
  // causes no watch event.
  std::vector<std::string> rd_many(std::string_view space, const TemplateImage& tmpl, std::size_t max) const;

  // Ends a lease: the tuple is gone for good. False when the lease is unknown
  // (never granted, already acked, expired, or its space was removed) or is
  // held by another client.
  bool ack(LeaseId lease, ClientId client);

  // Atomic completion: when `client` holds `lease`, ends it as ack() does and
  // then writes `tuples` to `space` in order, each as by out(); all in one
  // step, so no other request sees one without the other. When the lease is
  // not held (as for ack() returning false) nothing changes, nothing is
  // written, and it returns false. With no tuples it is exactly ack() (the
  // space is not created).
  bool complete(LeaseId lease, ClientId client, std::string_view space, std::vector<TupleImage> tuples,
                Millis now);
  // complete() of many leases as one step: if `client` holds every one of
  // them, ends them all (in order) and writes `tuples`; otherwise changes
  // nothing and returns the first lease not held.
  std::optional<LeaseId> complete_all(const std::vector<LeaseId>& leases, ClientId client,
                                      std::string_view space, std::vector<TupleImage> tuples, Millis now);

  // The tuple `client` holds under `lease`; nullopt when ack() would
  // return false. Changes nothing.
  std::optional<HeldTuple> held(LeaseId lease, ClientId client) const;

  // Extends a lease to now + duration. False as for ack().
  bool renew(LeaseId lease, Millis duration, ClientId client, Millis now);

  // Watches `tmpl` in `space` for `client`; events arrive as Deliveries.
  WatchId watch(std::string_view space, const TemplateImage& tmpl, ClientId client);
  // False when the watch is unknown or belongs to another client.
  bool unwatch(WatchId id, ClientId client);

  // Removes a space with its tuples, leases and watches; its parked waiters
  // receive SpaceRemoved. False when the space does not exist.
  bool remove(std::string_view space);

  // A client is gone: its leased tuples return to their spaces, its waiters
  // and watches are dropped. Returns the number of leases returned.
  std::size_t drop_client(ClientId client, Millis now);

  // Expires waiters and leases whose deadline is <= now.
  void advance(Millis now);

  // The earliest pending deadline, if any; the server sleeps until then.
  std::optional<Millis> next_deadline() const;
  // Entries in the deadline indexes: one per live lease and per parked
  // request with a timeout, never more. The store's memory is proportional to
  // what it holds, not to the requests it has handled (for tests).
  std::size_t deadline_entries() const;

  // Moves out what must be sent. The vector is reused between calls.
  void take_deliveries(std::vector<Delivery>& out);
  bool has_deliveries() const { return !deliveries_.empty(); }

  // Figures for one space (nullopt when it does not exist) or all of them.
  std::optional<SpaceStats> stats(std::string_view space) const;
  std::vector<SpaceStats> stats() const;

  std::uint64_t tuple_count() const;

  // ---- Durability.

  // Reports every later change to `journal` (null: none). The journal must
  // outlive the Store or be detached first.
  void set_journal(Journal* journal) { journal_ = journal; }

  // Stores a tuple recovered from a journal as number `seq`, behind the
  // tuples already in its bucket: restore in increasing seq order. Serves no
  // waiter, fires no watch and tells no journal; meant for an empty Store
  // before it serves.
  void restore(std::string_view space, std::uint64_t seq, TupleImage t);

  // Numbers later tuples from `next_seq` and later leases from `next_lease`
  // (each at least where it already is), so that numbers from an earlier run
  // recorded in a journal are never given again.
  void resume_numbering(std::uint64_t next_seq, LeaseId next_lease);

  // Calls fn(space, seq, tuple) for every stored tuple, leased ones included,
  // in no particular order: what a journal needs to write a snapshot.
  void for_each_tuple(const std::function<void(std::string_view, std::uint64_t, std::string_view)>& fn) const;

 private:
  struct Record;
  struct FieldIndex;
  struct Bucket;
  struct Waiter;
  struct Lease;
  struct Watch;
  struct WatchGroup;
  struct SpaceState;

  SpaceState& space_for(std::string_view name);
  SpaceState* find_space(std::string_view name);
  void store_record(SpaceState& s, Record* r, const std::string& key, Signature sig);
  // Offers a fresh record to waiters; returns true when a taker consumed it.
  bool offer(SpaceState& s, Record* r, const std::string& key, Signature sig, Millis now);
  Record* find_oldest(SpaceState& s, const TemplateImage& tmpl, Bucket** bucket_out);
  void unlink(SpaceState& s, Bucket* b, Record* r);
  void notify(SpaceState& s, const std::string& key, Signature sig, Record* r, WatchEventKind k);
  // The records of `b` that `tmpl` may match, in the bucket's order, from
  // the bucket's field index (built here when the bucket is large enough);
  // nullptr when the index cannot narrow them (then scan the bucket).
  static const std::vector<Record*>* indexed(const Bucket& b, const TemplateImage& tmpl);
  // The group a watch of `tmpl` is filed in (created when absent).
  static WatchGroup& watch_group(SpaceState& s, const TemplateImage& tmpl);
  // Adds the watches of `g` that a record of `bytes` may match to `out`:
  // the unchecked ones and those filed under one of its fields.
  static void watch_candidates(const WatchGroup& g, std::string_view bytes, std::vector<Watch*>& out);
  Taken hand_out(SpaceState& s, Record* r, const WaitSpec& spec, Millis now);
  void return_to_space(Lease&& lease, Millis now);
  void remove_waiter(std::uint64_t id);
  // Parks a waiter for `spec` (timeout != 0) on `s`.
  void park(SpaceState& s, const TemplateImage& tmpl, const WaitSpec& spec, Millis now);

  std::unordered_map<std::string, std::unique_ptr<SpaceState>> spaces_;
  std::unordered_map<std::uint64_t, Waiter*> waiters_;  // by waiter id
  std::unordered_map<LeaseId, Lease> leases_;
  std::unordered_map<WatchId, std::pair<SpaceState*, ClientId>> watch_owner_;
  std::unordered_map<ClientId, std::set<WatchId>> watches_of_;  // each client's, for drop_client
  // Deadlines: (when, id), one entry per live waiter with a timeout and per
  // live lease, erased when it ends.
  std::multimap<Millis, std::uint64_t> waiter_deadlines_;
  std::multimap<Millis, LeaseId> lease_deadlines_;
  std::vector<Delivery> deliveries_;
  std::uint64_t next_seq_ = 1;
  std::uint64_t next_waiter_ = 1;
  LeaseId next_lease_ = 1;
  WatchId next_watch_ = 1;
  Journal* journal_ = nullptr;
};

}  // namespace piranha::ts

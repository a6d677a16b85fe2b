#include "piranha/tuplespace/store.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <list>
#include <new>
#include <unordered_set>

namespace piranha::ts {

// A stored tuple: one allocation holding the list links, the write sequence
// number and the canonical bytes, so per-tuple overhead stays small.
struct Store::Record {
  Record* prev = nullptr;
  Record* next = nullptr;
  std::uint64_t seq = 0;
  std::uint32_t size = 0;

  std::string_view bytes() const { return {reinterpret_cast<const char*>(this + 1), size}; }

  static Record* make(std::string_view bytes, std::uint64_t seq) {
    void* mem = ::operator new(sizeof(Record) + bytes.size());
    auto* r = new (mem) Record();
    r->seq = seq;
    r->size = static_cast<std::uint32_t>(bytes.size());
    std::memcpy(r + 1, bytes.data(), bytes.size());
    return r;
  }
  static void destroy(Record* r) {
    r->~Record();
    ::operator delete(r);
  }
};

// A large bucket's records by the bytes of one of their fields, each list in
// the bucket's order: the system space holds one ("assign", 0, epoch, node,
// job) per node, and an agent reading its own must not scan them all.
struct Store::FieldIndex {
  std::uint8_t position = 0;
  std::unordered_map<std::string, std::vector<Record*>> by_value;
};

// Tuples sharing a signature and a field-0 value, oldest first.
struct Store::Bucket {
  Record* head = nullptr;
  Record* tail = nullptr;
  std::size_t count = 0;
  Signature signature = 0;
  std::size_t slot = 0;  // position in SpaceState::by_signature[signature]
  std::string key;
  // Built the first time a template with an actual beyond field 0 looks
  // into the bucket while it holds kIndexFrom records or more; kept up to
  // date from then on (a lookup may build it, hence mutable).
  mutable std::unique_ptr<FieldIndex> index;
};

struct Store::Waiter {
  std::uint64_t id = 0;
  SpaceState* space = nullptr;
  TemplateImage tmpl;
  WaitSpec spec;
  Millis deadline = kForever.count();
  std::list<Waiter*>* list = nullptr;
  std::list<Waiter*>::iterator pos;
  // Its entry in waiter_deadlines_ (when deadline != kForever), erased with it.
  std::multimap<Millis, std::uint64_t>::iterator due;
};

struct Store::Lease {
  Record* record = nullptr;
  std::string space;
  ClientId client = 0;
  Millis deadline = 0;
  // Its entry in lease_deadlines_, erased when the lease ends however it
  // ends, so the index holds live leases only (not every lease granted
  // within the last lease length).
  std::multimap<Millis, LeaseId>::iterator due;
};

struct Store::Watch {
  WatchId id;
  ClientId client;
  TemplateImage tmpl;
  // Where the watch is filed in its WatchGroup: under one of its checks
  // (check < tmpl.checks.size()), or among the unchecked.
  std::size_t check = 0;
};

// The watches of one index key (field 0 an actual) or of one signature
// (field 0 formal). A write looks at the unchecked ones, and of the checked
// ones only those filed under a field's bytes the tuple has: an agent's
// ("assign", 0, epoch, node, job) watch is filed under its node, so a write
// of one node's assignment meets one watch, not one per agent.
struct Store::WatchGroup {
  std::vector<Watch*> unchecked;
  // position -> the field's bytes at that position -> watches.
  std::map<std::uint8_t, std::unordered_map<std::string, std::vector<Watch*>>> by_check;
  std::size_t size = 0;
};

struct Store::SpaceState {
  std::string name;
  std::unordered_map<std::string, Bucket> buckets;
  std::unordered_map<Signature, std::vector<Bucket*>> by_signature;
  // Waiters whose field 0 is an actual, by index key; the others by signature.
  std::unordered_map<std::string, std::list<Waiter*>> waiters_by_key;
  std::unordered_map<Signature, std::list<Waiter*>> waiters_by_signature;
  // Every watch of the space, by id (the order events are delivered in),
  // and filed for lookup by a write (WatchGroup).
  std::map<WatchId, Watch> watches;
  std::unordered_map<std::string, WatchGroup> watches_by_key;
  std::unordered_map<Signature, WatchGroup> watches_by_signature;
  std::uint64_t tuples = 0;
  std::uint64_t bytes = 0;
  std::uint64_t waiters = 0;
  std::uint64_t leases = 0;
};

namespace {

// A bucket is indexed (FieldIndex) from this many records.
constexpr std::size_t kIndexFrom = 64;

// The bytes of field `position` of a record.
std::string field_bytes(std::string_view bytes, std::uint8_t position) {
  std::string_view fields[kMaxFields];
  const std::size_t n = split_fields(bytes, fields, kMaxFields);
  return position < n ? std::string(fields[position]) : std::string();
}

// True when the record's non-field-0 actuals match; the caller has already
// matched the signature and (when it is an actual) field 0.
bool checks_match(const TemplateImage& tmpl, std::string_view bytes) {
  if (tmpl.checks.empty()) return true;
  std::string_view fields[kMaxFields];
  split_fields(bytes, fields, kMaxFields);
  for (const auto& c : tmpl.checks)
    if (fields[c.position] != c.bytes) return false;
  return true;
}

Delivery make_delivery(Delivery::Kind kind, ClientId client, std::uint64_t request_id = 0) {
  Delivery d;
  d.kind = kind;
  d.client = client;
  d.request_id = request_id;
  return d;
}

// What a parked request `spec` is answered with.
Delivery waiter_delivery(Delivery::Kind kind, const WaitSpec& spec) {
  Delivery d = make_delivery(kind, spec.client, spec.request_id);
  d.form = !spec.many       ? Delivery::Form::One
           : spec.lease > 0 ? Delivery::Form::LeasedList
                            : Delivery::Form::List;
  return d;
}

// now + duration without overflow: a huge timeout or lease means "for ever".
Millis deadline_after(Millis now, Millis duration) {
  return duration > std::numeric_limits<Millis>::max() - now ? std::numeric_limits<Millis>::max()
                                                             : now + duration;
}

bool key_matches(const TemplateImage& tmpl, const std::string& key, Signature sig) {
  if (tmpl.signature != sig) return false;
  return !tmpl.field0_actual || tmpl.key == key;
}

}  // namespace

Store::Store() = default;

Store::~Store() {
  for (auto& [id, w] : waiters_) delete w;
  for (auto& [id, l] : leases_) Record::destroy(l.record);
  for (auto& [name, s] : spaces_)
    for (auto& [key, b] : s->buckets)
      for (Record* r = b.head; r;) {
        Record* next = r->next;
        Record::destroy(r);
        r = next;
      }
}

Store::SpaceState& Store::space_for(std::string_view name) {
  auto it = spaces_.find(std::string(name));
  if (it != spaces_.end()) return *it->second;
  auto s = std::make_unique<SpaceState>();
  s->name = std::string(name);
  auto* raw = s.get();
  spaces_.emplace(raw->name, std::move(s));
  return *raw;
}

Store::SpaceState* Store::find_space(std::string_view name) {
  auto it = spaces_.find(std::string(name));
  return it == spaces_.end() ? nullptr : it->second.get();
}

void Store::store_record(SpaceState& s, Record* r, const std::string& key, Signature sig) {
  auto [it, fresh] = s.buckets.try_emplace(key);
  Bucket& b = it->second;
  if (fresh) {
    b.signature = sig;
    b.key = key;
    auto& slots = s.by_signature[sig];
    b.slot = slots.size();
    slots.push_back(&b);
  }
  r->next = nullptr;
  r->prev = b.tail;
  if (b.tail)
    b.tail->next = r;
  else
    b.head = r;
  b.tail = r;
  if (b.index) b.index->by_value[field_bytes(r->bytes(), b.index->position)].push_back(r);
  ++b.count;
  ++s.tuples;
  s.bytes += r->size;
}

void Store::unlink(SpaceState& s, Bucket* b, Record* r) {
  if (b->index) {
    auto it = b->index->by_value.find(field_bytes(r->bytes(), b->index->position));
    auto& v = it->second;
    v.erase(std::find(v.begin(), v.end(), r));
    if (v.empty()) b->index->by_value.erase(it);
  }
  if (r->prev)
    r->prev->next = r->next;
  else
    b->head = r->next;
  if (r->next)
    r->next->prev = r->prev;
  else
    b->tail = r->prev;
  r->prev = r->next = nullptr;
  --b->count;
  --s.tuples;
  s.bytes -= r->size;
  if (b->count == 0) {
    auto sig_it = s.by_signature.find(b->signature);
    auto& slots = sig_it->second;
    slots[b->slot] = slots.back();
    slots[b->slot]->slot = b->slot;
    slots.pop_back();
    if (slots.empty()) s.by_signature.erase(sig_it);
    std::string key = std::move(b->key);
    s.buckets.erase(key);
  }
}

Store::WatchGroup& Store::watch_group(SpaceState& s, const TemplateImage& tmpl) {
  return tmpl.field0_actual ? s.watches_by_key[tmpl.key] : s.watches_by_signature[tmpl.signature];
}

void Store::watch_candidates(const WatchGroup& g, std::string_view bytes, std::vector<Watch*>& out) {
  out.insert(out.end(), g.unchecked.begin(), g.unchecked.end());
  if (g.by_check.empty()) return;
  std::string_view fields[kMaxFields];
  const std::size_t n = split_fields(bytes, fields, kMaxFields);
  for (const auto& [position, filed] : g.by_check) {
    if (position >= n) continue;
    const auto it = filed.find(std::string(fields[position]));
    if (it != filed.end()) out.insert(out.end(), it->second.begin(), it->second.end());
  }
}

void Store::notify(SpaceState& s, const std::string& key, Signature sig, Record* r, WatchEventKind k) {
  std::vector<Watch*> found;
  if (auto g = s.watches_by_key.find(key); g != s.watches_by_key.end())
    watch_candidates(g->second, r->bytes(), found);
  if (auto g = s.watches_by_signature.find(sig); g != s.watches_by_signature.end())
    watch_candidates(g->second, r->bytes(), found);
  // In the order the watches were made, as one client expects its events.
  std::sort(found.begin(), found.end(), [](const Watch* a, const Watch* b) { return a->id < b->id; });
  for (const Watch* wp : found) {
    const Watch& w = *wp;
    if (!key_matches(w.tmpl, key, sig) || !checks_match(w.tmpl, r->bytes())) continue;
    Delivery d = make_delivery(Delivery::Kind::Event, w.client);
    d.tuple.assign(r->bytes());
    d.space = s.name;
    d.watch = w.id;
    d.event = k;
    deliveries_.push_back(std::move(d));
  }
}

Taken Store::hand_out(SpaceState& s, Record* r, const WaitSpec& spec, Millis now) {
  Taken t{std::string(r->bytes()), 0};
  if (spec.lease > 0) {
    t.lease = next_lease_++;
    Millis deadline = deadline_after(now, spec.lease);
    leases_.emplace(t.lease,
                    Lease{r, s.name, spec.client, deadline, lease_deadlines_.emplace(deadline, t.lease)});
    ++s.leases;
  } else {
    if (journal_) journal_->erase(r->seq);
    Record::destroy(r);
  }
  return t;
}

bool Store::offer(SpaceState& s, Record* r, const std::string& key, Signature sig, Millis now) {
  if (s.waiters == 0) return false;
  std::list<Waiter*>* by_key = nullptr;
  std::list<Waiter*>* by_sig = nullptr;
  if (auto it = s.waiters_by_key.find(key); it != s.waiters_by_key.end()) by_key = &it->second;
  if (auto it = s.waiters_by_signature.find(sig); it != s.waiters_by_signature.end()) by_sig = &it->second;
  if (!by_key && !by_sig) return false;

  // Merge the two arrival-ordered lists; readers before the first taker get a
  // copy, the first taker consumes the tuple.
  std::vector<Waiter*> served;
  Waiter* taker = nullptr;
  auto a = by_key ? by_key->begin() : std::list<Waiter*>::iterator{};
  auto b = by_sig ? by_sig->begin() : std::list<Waiter*>::iterator{};
  auto a_end = by_key ? by_key->end() : a;
  auto b_end = by_sig ? by_sig->end() : b;
  while (a != a_end || b != b_end) {
    Waiter* w;
    if (b == b_end || (a != a_end && (*a)->id < (*b)->id))
      w = *a++;
    else
      w = *b++;
    if (!checks_match(w->tmpl, r->bytes())) continue;
    if (w->spec.take) {
      taker = w;
      break;
    }
    served.push_back(w);
  }
  for (Waiter* w : served) {
    Delivery d = waiter_delivery(Delivery::Kind::Tuple, w->spec);
    d.tuple.assign(r->bytes());
    d.space = s.name;
    deliveries_.push_back(std::move(d));
    remove_waiter(w->id);
  }
  if (!taker) return false;
  notify(s, key, sig, r, WatchEventKind::Taken);
  WaitSpec spec = taker->spec;
  remove_waiter(taker->id);
  Taken t = hand_out(s, r, spec, now);
  Delivery d = waiter_delivery(Delivery::Kind::Tuple, spec);
  d.tuple = std::move(t.tuple);
  d.space = s.name;
  d.lease = t.lease;
  d.taken = true;
  deliveries_.push_back(std::move(d));
  return true;
}

void Store::out(std::string_view space, TupleImage t, Millis now) {
  SpaceState& s = space_for(space);
  Record* r = Record::make(t.bytes, next_seq_++);
  if (journal_) journal_->put(r->seq, space, t.bytes);
  if (!s.watches.empty()) notify(s, t.key, t.signature, r, WatchEventKind::Written);
  if (!offer(s, r, t.key, t.signature, now)) store_record(s, r, t.key, t.signature);
}

const std::vector<Store::Record*>* Store::indexed(const Bucket& b, const TemplateImage& tmpl) {
  static const std::vector<Record*> none;
  if (tmpl.checks.empty()) return nullptr;
  if (!b.index) {
    if (b.count < kIndexFrom) return nullptr;
    // On the checked field whose values differ most among the records.
    std::uint8_t best = tmpl.checks.front().position;
    std::size_t most = 0;
    for (const auto& c : tmpl.checks) {
      std::unordered_set<std::string> seen;
      for (const Record* r = b.head; r; r = r->next) seen.insert(field_bytes(r->bytes(), c.position));
      if (seen.size() > most) {
        most = seen.size();
        best = c.position;
      }
    }
    auto index = std::make_unique<FieldIndex>();
    index->position = best;
    for (Record* r = b.head; r; r = r->next) index->by_value[field_bytes(r->bytes(), best)].push_back(r);
    b.index = std::move(index);
  }
  for (const auto& c : tmpl.checks)
    if (c.position == b.index->position) {
      auto it = b.index->by_value.find(c.bytes);
      return it == b.index->by_value.end() ? &none : &it->second;
    }
  return nullptr;
}

Store::Record* Store::find_oldest(SpaceState& s, const TemplateImage& tmpl, Bucket** bucket_out) {
  auto first_match = [&](Bucket& b) -> Record* {
    if (const auto* v = indexed(b, tmpl)) {
      for (Record* r : *v)
        if (checks_match(tmpl, r->bytes())) return r;
      return nullptr;
    }
    for (Record* r = b.head; r; r = r->next)
      if (checks_match(tmpl, r->bytes())) return r;
    return nullptr;
  };
  if (tmpl.field0_actual) {
    auto it = s.buckets.find(tmpl.key);
    if (it == s.buckets.end()) return nullptr;
    *bucket_out = &it->second;
    return first_match(it->second);
  }
  auto it = s.by_signature.find(tmpl.signature);
  if (it == s.by_signature.end()) return nullptr;
  Record* best = nullptr;
  for (Bucket* b : it->second) {
    Record* r = first_match(*b);
    if (r && (!best || r->seq < best->seq)) {
      best = r;
      *bucket_out = b;
    }
  }
  return best;
}

std::optional<Taken> Store::in(std::string_view space, const TemplateImage& tmpl, const WaitSpec& spec,
                               Millis now) {
  SpaceState& s = space_for(space);
  Bucket* b = nullptr;
  if (Record* r = find_oldest(s, tmpl, &b)) {
    if (!spec.take) return Taken{std::string(r->bytes()), 0};
    if (!s.watches.empty()) notify(s, b->key, b->signature, r, WatchEventKind::Taken);
    unlink(s, b, r);
    return hand_out(s, r, spec, now);
  }
  if (spec.timeout != 0) park(s, tmpl, spec, now);
  return std::nullopt;
}

void Store::park(SpaceState& s, const TemplateImage& tmpl, const WaitSpec& spec, Millis now) {
  auto* w = new Waiter();
  w->id = next_waiter_++;
  w->space = &s;
  w->tmpl = tmpl;
  w->spec = spec;
  w->list = tmpl.field0_actual ? &s.waiters_by_key[tmpl.key] : &s.waiters_by_signature[tmpl.signature];
  w->pos = w->list->insert(w->list->end(), w);
  if (spec.timeout > 0) {
    w->deadline = deadline_after(now, spec.timeout);
    w->due = waiter_deadlines_.emplace(w->deadline, w->id);
  }
  waiters_.emplace(w->id, w);
  ++s.waiters;
}

std::vector<Taken> Store::take_many(std::string_view space, const TemplateImage& tmpl, std::size_t max,
                                    const WaitSpec& spec, Millis now) {
  std::vector<Taken> taken = take_many(space, tmpl, max, spec.client, spec.lease, now);
  if (taken.empty() && spec.timeout != 0) {
    WaitSpec many = spec;
    many.take = true;
    many.many = true;
    park(space_for(space), tmpl, many, now);
  }
  return taken;
}

std::vector<std::string> Store::in_many(std::string_view space, const TemplateImage& tmpl, std::size_t max,
                                        Millis now) {
  std::vector<std::string> tuples;
  for (Taken& t : take_many(space, tmpl, max, 0, 0, now)) tuples.push_back(std::move(t.tuple));
  return tuples;
}

std::vector<Taken> Store::take_many(std::string_view space, const TemplateImage& tmpl, std::size_t max,
                                    ClientId client, Millis lease, Millis now) {
  std::vector<Taken> taken;
  SpaceState* s = find_space(space);
  if (!s) return taken;
  WaitSpec spec;
  spec.client = client;
  spec.lease = lease > 0 ? lease : 0;
  while (taken.size() < max) {
    Bucket* b = nullptr;
    Record* r = find_oldest(*s, tmpl, &b);
    if (!r) break;
    if (!s->watches.empty()) notify(*s, b->key, b->signature, r, WatchEventKind::Taken);
    unlink(*s, b, r);
    taken.push_back(hand_out(*s, r, spec, now));
  }
  return taken;
}

std::vector<std::string> Store::rd_many(std::string_view space, const TemplateImage& tmpl,
                                        std::size_t max) const {
  std::vector<std::string> copies;
  auto it = spaces_.find(std::string(space));
  if (it == spaces_.end() || max == 0) return copies;
  const SpaceState& s = *it->second;
  // Each bucket is oldest first, so a merge of the template's buckets by
  // write sequence yields the matches oldest first, touching no others.
  std::vector<const Bucket*> buckets;
  if (tmpl.field0_actual) {
    auto b = s.buckets.find(tmpl.key);
    if (b == s.buckets.end()) return copies;
    if (const auto* v = indexed(b->second, tmpl)) {
      for (const Record* r : *v) {
        if (copies.size() >= max) break;
        if (checks_match(tmpl, r->bytes())) copies.emplace_back(r->bytes());
      }
      return copies;
    }
    buckets.push_back(&b->second);
  } else if (auto sig = s.by_signature.find(tmpl.signature); sig != s.by_signature.end()) {
    buckets.assign(sig->second.begin(), sig->second.end());
  }
  auto next_match = [&](const Record* r) {
    while (r && !checks_match(tmpl, r->bytes())) r = r->next;
    return r;
  };
  auto later = [](const Record* a, const Record* b) { return a->seq > b->seq; };
  std::vector<const Record*> heads;  // a min-heap on seq: each bucket's next match
  for (const Bucket* b : buckets)
    if (const Record* r = next_match(b->head)) heads.push_back(r);
  std::make_heap(heads.begin(), heads.end(), later);
  while (!heads.empty() && copies.size() < max) {
    std::pop_heap(heads.begin(), heads.end(), later);
    const Record* r = heads.back();
    copies.emplace_back(r->bytes());
    if (const Record* n = next_match(r->next)) {
      heads.back() = n;
      std::push_heap(heads.begin(), heads.end(), later);
    } else {
      heads.pop_back();
    }
  }
  return copies;
}

void Store::remove_waiter(std::uint64_t id) {
  auto it = waiters_.find(id);
  if (it == waiters_.end()) return;
  Waiter* w = it->second;
  SpaceState& s = *w->space;
  w->list->erase(w->pos);
  if (w->list->empty()) {
    if (w->tmpl.field0_actual)
      s.waiters_by_key.erase(w->tmpl.key);
    else
      s.waiters_by_signature.erase(w->tmpl.signature);
  }
  --s.waiters;
  if (w->deadline != kForever.count()) waiter_deadlines_.erase(w->due);
  waiters_.erase(it);
  delete w;
}

bool Store::ack(LeaseId id, ClientId client) {
  auto it = leases_.find(id);
  if (it == leases_.end() || it->second.client != client) return false;
  if (SpaceState* s = find_space(it->second.space)) --s->leases;
  if (journal_) journal_->erase(it->second.record->seq);
  Record::destroy(it->second.record);
  lease_deadlines_.erase(it->second.due);
  leases_.erase(it);
  return true;
}

bool Store::complete(LeaseId lease, ClientId client, std::string_view space, std::vector<TupleImage> tuples,
                     Millis now) {
  if (!ack(lease, client)) return false;
  for (TupleImage& t : tuples) out(space, std::move(t), now);
  return true;
}

std::optional<LeaseId> Store::complete_all(const std::vector<LeaseId>& leases, ClientId client,
                                           std::string_view space, std::vector<TupleImage> tuples,
                                           Millis now) {
  std::unordered_set<LeaseId> seen;
  for (LeaseId id : leases) {
    auto it = leases_.find(id);
    // A lease named twice is not held the second time.
    if (it == leases_.end() || it->second.client != client || !seen.insert(id).second) return id;
  }
  for (LeaseId id : leases) ack(id, client);
  for (TupleImage& t : tuples) out(space, std::move(t), now);
  return std::nullopt;
}

std::optional<HeldTuple> Store::held(LeaseId id, ClientId client) const {
  auto it = leases_.find(id);
  if (it == leases_.end() || it->second.client != client) return std::nullopt;
  return HeldTuple{it->second.space, it->second.record->bytes()};
}

bool Store::renew(LeaseId id, Millis duration, ClientId client, Millis now) {
  auto it = leases_.find(id);
  if (it == leases_.end() || it->second.client != client) return false;
  it->second.deadline = deadline_after(now, duration);
  lease_deadlines_.erase(it->second.due);
  it->second.due = lease_deadlines_.emplace(it->second.deadline, id);
  return true;
}

void Store::return_to_space(Lease&& lease, Millis now) {
  SpaceState& s = space_for(lease.space);
  if (s.leases) --s.leases;
  Record* r = lease.record;
  std::uint64_t was = r->seq;
  r->seq = next_seq_++;
  if (journal_) journal_->renumber(was, r->seq);
  TupleImage img = describe_tuple(r->bytes());
  if (!s.watches.empty()) notify(s, img.key, img.signature, r, WatchEventKind::Written);
  if (!offer(s, r, img.key, img.signature, now)) store_record(s, r, img.key, img.signature);
}

WatchId Store::watch(std::string_view space, const TemplateImage& tmpl, ClientId client) {
  SpaceState& s = space_for(space);
  WatchId id = next_watch_++;
  Watch& w = s.watches.emplace(id, Watch{id, client, tmpl}).first->second;
  WatchGroup& g = watch_group(s, tmpl);
  // Filed under the check whose place holds the fewest watches so far, so
  // that watches differing in one field (each agent's node) spread out even
  // when they share another (scheduler 0).
  w.check = tmpl.checks.size();
  std::size_t fewest = std::numeric_limits<std::size_t>::max();
  for (std::size_t i = 0; i < tmpl.checks.size(); ++i) {
    const auto& c = tmpl.checks[i];
    std::size_t n = 0;
    if (auto p = g.by_check.find(c.position); p != g.by_check.end())
      if (auto f = p->second.find(c.bytes); f != p->second.end()) n = f->second.size();
    if (n < fewest) {
      fewest = n;
      w.check = i;
    }
  }
  if (w.check < tmpl.checks.size()) {
    const auto& c = tmpl.checks[w.check];
    g.by_check[c.position][c.bytes].push_back(&w);
  } else {
    g.unchecked.push_back(&w);
  }
  ++g.size;
  watch_owner_.emplace(id, std::make_pair(&s, client));
  watches_of_[client].insert(id);
  return id;
}

bool Store::unwatch(WatchId id, ClientId client) {
  auto it = watch_owner_.find(id);
  if (it == watch_owner_.end() || it->second.second != client) return false;
  SpaceState& s = *it->second.first;
  auto w = s.watches.find(id);
  const TemplateImage& tmpl = w->second.tmpl;
  const bool by_key = tmpl.field0_actual;
  WatchGroup& g = watch_group(s, tmpl);
  auto drop = [&](std::vector<Watch*>& v) { v.erase(std::find(v.begin(), v.end(), &w->second)); };
  if (w->second.check < tmpl.checks.size()) {
    const auto& c = tmpl.checks[w->second.check];
    auto p = g.by_check.find(c.position);
    auto f = p->second.find(c.bytes);
    drop(f->second);
    if (f->second.empty()) p->second.erase(f);
    if (p->second.empty()) g.by_check.erase(p);
  } else {
    drop(g.unchecked);
  }
  if (--g.size == 0) {
    if (by_key)
      s.watches_by_key.erase(tmpl.key);
    else
      s.watches_by_signature.erase(tmpl.signature);
  }
  s.watches.erase(w);
  watch_owner_.erase(it);
  if (auto c = watches_of_.find(client); c != watches_of_.end()) {
    c->second.erase(id);
    if (c->second.empty()) watches_of_.erase(c);
  }
  return true;
}

bool Store::remove(std::string_view space) {
  auto it = spaces_.find(std::string(space));
  if (it == spaces_.end()) return false;
  SpaceState* s = it->second.get();
  if (journal_) journal_->drop_space(s->name);
  std::vector<std::uint64_t> ids;
  for (auto& [id, w] : waiters_)
    if (w->space == s) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  for (auto id : ids) {
    Waiter* w = waiters_.at(id);
    deliveries_.push_back(waiter_delivery(Delivery::Kind::SpaceRemoved, w->spec));
    remove_waiter(id);
  }
  for (auto l = leases_.begin(); l != leases_.end();) {
    if (l->second.space == s->name) {
      Record::destroy(l->second.record);
      lease_deadlines_.erase(l->second.due);
      l = leases_.erase(l);
    } else {
      ++l;
    }
  }
  for (const auto& [id, w] : s->watches) {
    watch_owner_.erase(id);
    if (auto c = watches_of_.find(w.client); c != watches_of_.end()) {
      c->second.erase(id);
      if (c->second.empty()) watches_of_.erase(c);
    }
  }
  for (auto& [key, b] : s->buckets)
    for (Record* r = b.head; r;) {
      Record* next = r->next;
      Record::destroy(r);
      r = next;
    }
  spaces_.erase(it);
  return true;
}

std::size_t Store::drop_client(ClientId client, Millis now) {
  std::vector<std::uint64_t> ids;
  for (auto& [id, w] : waiters_)
    if (w->spec.client == client) ids.push_back(id);
  for (auto id : ids) remove_waiter(id);

  std::vector<LeaseId> held;
  for (auto& [id, l] : leases_)
    if (l.client == client) held.push_back(id);
  std::sort(held.begin(), held.end());  // return in the order they were granted
  for (LeaseId id : held) {
    auto node = leases_.extract(id);
    lease_deadlines_.erase(node.mapped().due);
    return_to_space(std::move(node.mapped()), now);
  }

  if (auto c = watches_of_.find(client); c != watches_of_.end()) {
    const std::vector<WatchId> watches(c->second.begin(), c->second.end());
    for (WatchId id : watches) unwatch(id, client);
  }
  return held.size();
}

void Store::advance(Millis now) {
  // Every entry belongs to a live waiter or lease: ending one erases its entry.
  while (!waiter_deadlines_.empty() && waiter_deadlines_.begin()->first <= now) {
    const Waiter* w = waiters_.at(waiter_deadlines_.begin()->second);
    deliveries_.push_back(waiter_delivery(Delivery::Kind::Timeout, w->spec));
    remove_waiter(w->id);
  }
  while (!lease_deadlines_.empty() && lease_deadlines_.begin()->first <= now) {
    auto node = leases_.extract(lease_deadlines_.begin()->second);
    lease_deadlines_.erase(lease_deadlines_.begin());
    return_to_space(std::move(node.mapped()), now);
  }
}

std::size_t Store::deadline_entries() const {
  return waiter_deadlines_.size() + lease_deadlines_.size();
}

std::optional<Millis> Store::next_deadline() const {
  std::optional<Millis> next;
  if (!waiter_deadlines_.empty()) next = waiter_deadlines_.begin()->first;
  if (!lease_deadlines_.empty()) {
    Millis l = lease_deadlines_.begin()->first;
    if (!next || l < *next) next = l;
  }
  return next;
}

void Store::take_deliveries(std::vector<Delivery>& out) {
  out.clear();
  out.swap(deliveries_);
}

std::optional<SpaceStats> Store::stats(std::string_view space) const {
  auto it = spaces_.find(std::string(space));
  if (it == spaces_.end()) return std::nullopt;
  const SpaceState& s = *it->second;
  return SpaceStats{s.name, s.tuples, s.bytes, s.waiters, s.leases, s.watches.size()};
}

std::vector<SpaceStats> Store::stats() const {
  std::vector<SpaceStats> all;
  for (auto& [name, s] : spaces_)
    all.push_back(SpaceStats{s->name, s->tuples, s->bytes, s->waiters, s->leases, s->watches.size()});
  std::sort(all.begin(), all.end(), [](auto& a, auto& b) { return a.name < b.name; });
  return all;
}

void Store::restore(std::string_view space, std::uint64_t seq, TupleImage t) {
  SpaceState& s = space_for(space);
  store_record(s, Record::make(t.bytes, seq), t.key, t.signature);
  next_seq_ = std::max(next_seq_, seq + 1);
}

void Store::resume_numbering(std::uint64_t next_seq, LeaseId next_lease) {
  next_seq_ = std::max(next_seq_, next_seq);
  next_lease_ = std::max(next_lease_, next_lease);
}

void Store::for_each_tuple(
    const std::function<void(std::string_view, std::uint64_t, std::string_view)>& fn) const {
  for (auto& [name, s] : spaces_)
    for (auto& [key, b] : s->buckets)
      for (const Record* r = b.head; r; r = r->next) fn(name, r->seq, r->bytes());
  for (auto& [id, l] : leases_) fn(l.space, l.record->seq, l.record->bytes());
}

std::uint64_t Store::tuple_count() const {
  std::uint64_t n = 0;
  for (auto& [name, s] : spaces_) n += s->tuples;
  return n;
}

}  // namespace piranha::ts

// The wire protocol between tuple-space clients and the server.
//
// Every message is one ZeroMQ frame holding one msgpack array. Requests are
// [version, request_id, op, args...]; replies are [version, request_id,
// status, payload...]; watch events are [version, 0, "event", ...].
// docs/protocol.md is the normative description; this header is its C++ form.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "piranha/tuplespace/codec.h"
#include "piranha/tuplespace/status.h"
#include "piranha/tuplespace/store.h"

namespace piranha::ts {

// Bumped on any incompatible change; a server answers other versions with
// error Code::UnsupportedVersion.
inline constexpr std::int64_t kProtocolVersion = 1;

// Requests larger than this are answered with error Code::TooLarge (the server's
// --max-message option changes it).
inline constexpr std::size_t kDefaultMaxMessageBytes = 16u << 20;

// Limits on a decoded request besides its size.
inline constexpr std::size_t kMaxSpaceNameBytes = 256;
// Tuples per out_many or completing ack, and `max` of in_many / rd_many.
inline constexpr std::size_t kMaxTuplesPerRequest = 1'000'000;

enum class Op : std::uint8_t {
  Hello,
  Out,
  OutMany,
  In,
  Rd,
  InMany,
  Ack,
  Renew,
  Watch,
  Unwatch,
  Remove,
  Stats,
  Bye,     // the client is closing: drop its session now (no reply)
  RdMany,  // copy-collect: copies of up to `max` matching tuples
};

std::string_view op_name(Op op);

// The codes of error replies are ts::Code (status.h), written as their wire
// words by encode_error and read back by decode_reply.

// A decoded, validated request. Which members are meaningful depends on `op`.
struct Request {
  std::uint64_t id = 0;
  Op op = Op::Hello;
  std::string space;
  std::vector<TupleImage> tuples;  // Out (one), OutMany, Ack when `completes`
  TemplateImage tmpl;              // In, Rd, InMany, RdMany, Watch
  Millis timeout =
      kForever
          .count();  // In, Rd, InMany: -1 waits forever, 0 never waits (decoded as 0 when InMany sends none)
  Millis lease = 0;  // In, InMany: > 0 takes under leases; Renew: new length
  std::uint64_t max = 0;        // InMany, RdMany
  std::uint64_t handle = 0;     // Ack/Renew: lease id (Ack: the first); Unwatch: watch id
  std::vector<LeaseId> leases;  // Ack given an array of lease ids: all of them, in order
  bool all_spaces = true;       // Stats: no space named
  bool completes = false;       // Ack: also writes `tuples` to `space` (atomic completion)
  bool served_first = false;    // Hello: the session asks that its requests be served first
};

// Why a frame could not be decoded. request_id is the frame's id when it could
// be read, else 0.
struct DecodeFailure {
  std::uint64_t request_id = 0;
  Code code = Code::BadRequest;  // BadRequest, UnsupportedVersion or UnknownOp
  std::string message;
};

// Decodes one request frame. Never throws and never crashes on any input:
// malformed frames yield a DecodeFailure whose message says what and where.
std::variant<Request, DecodeFailure> decode_request(std::string_view frame);

// ---- Server side: reply encoders. Each appends one whole frame to `out`.

void encode_ok(std::string& out, std::uint64_t rid);
void encode_ok_count(std::string& out, std::uint64_t rid, std::uint64_t n);
void encode_ok_tuple(std::string& out, std::uint64_t rid, std::string_view tuple, LeaseId lease);
void encode_ok_tuples(std::string& out, std::uint64_t rid, const std::vector<std::string>& tuples);
// The reply of in_many under a lease: [tuple, ...] and [lease_id, ...], in step.
void encode_ok_leased_tuples(std::string& out, std::uint64_t rid, const std::vector<Taken>& taken);
// The reply of a parked in_many answered by one tuple: [tuple], and [lease]
// when it was taken under a lease (lease > 0).
void encode_ok_one_of_many(std::string& out, std::uint64_t rid, std::string_view tuple, LeaseId lease);
void encode_ok_stats(std::string& out, std::uint64_t rid, const std::vector<SpaceStats>& stats);
// With a pool name (ServerOptions::pool), the pool's name and id follow the
// three numbers; without one the reply is as it always was.
void encode_ok_hello(std::string& out, std::uint64_t rid, std::size_t max_message_bytes,
                     std::string_view pool_name = {}, std::string_view pool_id = {});
void encode_timeout(std::string& out, std::uint64_t rid);
// `code` is one a server sends (sent_by_server).
void encode_error(std::string& out, std::uint64_t rid, Code code, std::string_view message);
void encode_event(std::string& out, WatchId watch, WatchEventKind kind, std::string_view space,
                  std::string_view tuple);

// ---- Client side: request encoders. Each replaces `out` with one frame.

// served_first: the optional argument `true` (docs/protocol.md, "hello").
void encode_hello(std::string& out, std::uint64_t rid, bool served_first = false);
void encode_out(std::string& out, std::uint64_t rid, std::string_view space, const Tuple& t);
void encode_out_many(std::string& out, std::uint64_t rid, std::string_view space,
                     const std::vector<Tuple>& ts);
// op is Op::In or Op::Rd.
void encode_in(std::string& out, std::uint64_t rid, Op op, std::string_view space, const Template& t,
               Millis timeout, Millis lease);
// timeout != 0 waits for the first tuple that long (-1: forever); lease > 0
// takes every tuple under its own lease of that length. On the wire the
// lease is the optional fourth argument and the timeout the fifth (the
// order of this version of the protocol); with timeout 0 and lease 0 it
// sends the three-argument form.
void encode_in_many(std::string& out, std::uint64_t rid, std::string_view space, const Template& t,
                    std::uint64_t max, Millis timeout = 0, Millis lease = 0);
void encode_rd_many(std::string& out, std::uint64_t rid, std::string_view space, const Template& t,
                    std::uint64_t max);
// A request that may wait, as encode_in (op In or Rd) or encode_in_many (op
// InMany, `max`) would encode it: what a client re-issues after a lost
// connection with what is left of its timeout.
void encode_waiting(std::string& out, std::uint64_t rid, Op op, std::string_view space, const Template& t,
                    Millis timeout, Millis lease, std::uint64_t max);
void encode_ack(std::string& out, std::uint64_t rid, LeaseId lease);
// The completing ack: ends `lease` and writes `ts` to `space` in one step.
// The completing ack of many leases at once: [lease_id, ...], space, tuples.
void encode_complete_all(std::string& out, std::uint64_t rid, const std::vector<LeaseId>& leases,
                         std::string_view space, const std::vector<Tuple>& ts);
void encode_complete(std::string& out, std::uint64_t rid, LeaseId lease, std::string_view space,
                     const std::vector<Tuple>& ts);
void encode_renew(std::string& out, std::uint64_t rid, LeaseId lease, Millis duration);
void encode_watch(std::string& out, std::uint64_t rid, std::string_view space, const Template& t);
void encode_unwatch(std::string& out, std::uint64_t rid, WatchId watch);
void encode_remove(std::string& out, std::uint64_t rid, std::string_view space);
void encode_stats(std::string& out, std::uint64_t rid, std::string_view space);  // "" = all
void encode_bye(std::string& out, std::uint64_t rid);

// A decoded reply or event.
struct Reply {
  enum class Status : std::uint8_t { Ok, Timeout, Error, Event };
  std::uint64_t request_id = 0;
  Status status = Status::Ok;
  Code code = Code::BadRequest;         // Error; Unrecognized for a word this version does not know
  std::string message;                  // Error; for an Unrecognized code it starts with the word sent
  std::vector<Tuple> tuples;            // Ok for in/rd (one), in_many and rd_many; Event (one)
  std::vector<LeaseId> leases;          // Ok for in_many under a lease: one per tuple, in step
  std::uint64_t number = 0;             // lease id (in), count (out_many), watch id (watch, Event)
  std::vector<SpaceStats> stats;        // Ok for stats
  std::uint64_t max_message_bytes = 0;  // Ok for hello
  std::string pool_name, pool_id;       // Ok for hello: the server's pool; empty when it has none
  WatchEventKind event = WatchEventKind::Written;  // Event
  std::string space;                               // Event
};

// Decodes a reply frame. Throws WireError when the server sent garbage.
Reply decode_reply(std::string_view frame);

}  // namespace piranha::ts

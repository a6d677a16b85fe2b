// The status codes of the tuple space: every code an error reply carries on
// the wire and every code a client raises itself, in one closed enum, with
// the one mapping to and from the wire's strings.
//
// docs/protocol.md ("Errors") lists them in one table, in this order; a test
// keeps the two the same. The strings are the contract with other clients
// and never change; a code is added at the end of its group, with its row.
#pragma once

#include <cstdint>
#include <string_view>

namespace piranha::ts {

enum class Code : std::uint8_t {
  // Sent by the server in error replies.
  BadRequest,          // the request is malformed or an argument is out of range
  UnsupportedVersion,  // the request's protocol version is not this server's
  UnknownOp,           // the request's op is not one the server knows
  TooLarge,            // the request exceeds the server's max_message_bytes
  UnknownSpace,        // remove or stats of a space that does not exist
  UnknownLease,        // ack, renew or completion of a lease that is not held
  UnknownWatch,        // unwatch of a watch that is not the session's
  SpaceRemoved,        // a parked in/rd/in_many whose space was removed
  NotPermitted,        // the session's role does not allow the request (docs/security.md)
  DiskFull,            // a durable server's disk has no room for the change: nothing was done

  // Raised by a client itself; never sent by a server.
  Unreachable,       // no server answered within the deadline (connecting, or reconnecting)
  UnknownOutcome,    // the connection was lost before the answer; the request may have been carried out
  DeadlineExceeded,  // the server stayed connected but did not answer within the deadline
  AuthFailed,        // the server refused the CURVE handshake
  Interrupted,       // the client's interrupt fd became readable while a call waited
  Closed,            // the client was destroyed while the call waited (FiberClient)
  BadReply,          // the server sent a reply that could not be decoded or does not fit the request
  Timeout,           // a wait for a tuple ended with none where the caller needed one
  WrongPool,         // the server serves another pool than the one this client belongs to (client.h)

  // A code from the wire that this version does not know (a newer server's):
  // the error's message keeps the word that was sent.
  Unrecognized,
};

// The code's word on the wire ("unknown_lease"); every code has its own.
std::string_view code_to_wire(Code code);

// The code a word from the wire names: Code::Unrecognized for a word that is
// none of the above (never throws).
Code code_from_wire(std::string_view word);

// Whether a server may send `code` in an error reply (the first group above).
bool sent_by_server(Code code);

}  // namespace piranha::ts

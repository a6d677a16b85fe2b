// WireError: the one error type for bytes from the wire that are not a valid
// frame: a tuple or template image (also as the durable log stores it), a
// tuple-space reply, a trellis link's message. It comes from a peer (or from
// corruption), not from the user: bad input a user gave is an InputError
// (piranha/base/input_error.h). Each receiver decides what a bad frame costs:
// the tuple-space server answers bad_request, a trellis link drops the
// message.
//
// what() says what was wrong with the bytes, e.g. "truncated field".
#pragma once

#include <stdexcept>

namespace piranha {

class WireError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace piranha

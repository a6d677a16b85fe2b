#include "piranha/access/sealed_key.h"

#include <doctest/doctest.h>

#include "piranha/base/input_error.h"

using namespace piranha;

TEST_CASE("sealed key: opens with the recipient's key pair only, to the secret key sealed") {
  const ts::CurveKeyPair agent = ts::new_curve_key_pair(), other = ts::new_curve_key_pair();
  const ts::CurveKeyPair loan = ts::new_curve_key_pair();
  const std::string sealed = seal_secret_key(agent.public_key, loan.secret_key);
  CHECK(sealed.size() == kSealedKeyLength);
  CHECK(open_secret_key(agent, sealed) == loan.secret_key);
  CHECK(ts::curve_public_key_of(*open_secret_key(agent, sealed)) == loan.public_key);
  CHECK_FALSE(open_secret_key(other, sealed));
  // A new ephemeral key each time, the same secret inside.
  const std::string again = seal_secret_key(agent.public_key, loan.secret_key);
  CHECK(again != sealed);
  CHECK(open_secret_key(agent, again) == loan.secret_key);
}

TEST_CASE("sealed key: a changed or malformed sealed text does not open") {
  const ts::CurveKeyPair agent = ts::new_curve_key_pair();
  std::string sealed = seal_secret_key(agent.public_key, ts::new_curve_key_pair().secret_key);
  std::string changed = sealed;
  changed[60] = changed[60] == 'a' ? 'b' : 'a';
  CHECK_FALSE(open_secret_key(agent, changed));
  CHECK_FALSE(open_secret_key(agent, sealed.substr(0, 99)));
  CHECK_FALSE(open_secret_key(agent, ""));
  CHECK_FALSE(open_secret_key(agent, std::string(100, ' ')));
  CHECK_FALSE(open_secret_key(ts::CurveKeyPair{}, sealed));
}

TEST_CASE("sealed key: sealing needs keys in Z85 text") {
  const ts::CurveKeyPair k = ts::new_curve_key_pair();
  CHECK_THROWS_AS(seal_secret_key("not a key", k.secret_key), InputError);
  CHECK_THROWS_AS(seal_secret_key(k.public_key, "short"), InputError);
}

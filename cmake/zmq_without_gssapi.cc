// ZeroMQ's GSS-API security mechanism, refused: the functions a static
// libzmq.a refers to for it, each failing as GSS-API fails (GSS_S_FAILURE).
//
// Why: Piranha authenticates with CURVE (docs/security.md) and never selects
// the GSSAPI mechanism (ZMQ_GSSAPI_SERVER / ZMQ_GSSAPI_CLIENT are never set),
// but libzmq.a's mechanism code refers to these functions all the same.
// Linking the real libgssapi_krb5 for them loads it and six more shared
// libraries (krb5, k5crypto, com_err, krb5support, keyutils, resolv) into
// every Piranha process: 1.6-1.8 ms of a bare libzmq program's start on the
// machine measured (docs/performance-history.md, "Job start"). These stand in.
//
// Only linked with the static libzmq (CMakeLists.txt, PIRANHA_STATIC_ZMQ);
// never installed. If something did select GSSAPI, its handshake would fail
// at the first call here, as it fails against a GSS-API without credentials:
// the connection is refused, nothing else happens. Signatures are checked
// against Debian's <gssapi/gssapi.h> (libkrb5-dev, a dependency of
// libzmq3-dev).
#include <gssapi/gssapi.h>

extern "C" {

gss_OID GSS_C_NT_HOSTBASED_SERVICE = GSS_C_NO_OID;
gss_OID GSS_C_NT_USER_NAME = GSS_C_NO_OID;

namespace {
OM_uint32 refuse(OM_uint32* minor) {
  if (minor) *minor = 0;
  return GSS_S_FAILURE;
}
}  // namespace

OM_uint32 gss_accept_sec_context(OM_uint32* minor, gss_ctx_id_t*, gss_cred_id_t, gss_buffer_t,
                                 gss_channel_bindings_t, gss_name_t*, gss_OID*, gss_buffer_t, OM_uint32*,
                                 OM_uint32*, gss_cred_id_t*) {
  return refuse(minor);
}
OM_uint32 gss_acquire_cred(OM_uint32* minor, gss_name_t, OM_uint32, gss_OID_set, gss_cred_usage_t,
                           gss_cred_id_t*, gss_OID_set*, OM_uint32*) {
  return refuse(minor);
}
OM_uint32 gss_delete_sec_context(OM_uint32* minor, gss_ctx_id_t*, gss_buffer_t) {
  return refuse(minor);
}
OM_uint32 gss_display_name(OM_uint32* minor, gss_name_t, gss_buffer_t, gss_OID*) {
  return refuse(minor);
}
OM_uint32 gss_import_name(OM_uint32* minor, gss_buffer_t, gss_OID, gss_name_t*) {
  return refuse(minor);
}
OM_uint32 gss_init_sec_context(OM_uint32* minor, gss_cred_id_t, gss_ctx_id_t*, gss_name_t, gss_OID, OM_uint32,
                               OM_uint32, gss_channel_bindings_t, gss_buffer_t, gss_OID*, gss_buffer_t,
                               OM_uint32*, OM_uint32*) {
  return refuse(minor);
}
OM_uint32 gss_release_buffer(OM_uint32* minor, gss_buffer_t) {
  return refuse(minor);
}
OM_uint32 gss_release_cred(OM_uint32* minor, gss_cred_id_t*) {
  return refuse(minor);
}
OM_uint32 gss_release_name(OM_uint32* minor, gss_name_t*) {
  return refuse(minor);
}
OM_uint32 gss_unwrap(OM_uint32* minor, gss_ctx_id_t, gss_buffer_t, gss_buffer_t, int*, gss_qop_t*) {
  return refuse(minor);
}
OM_uint32 gss_wrap(OM_uint32* minor, gss_ctx_id_t, int, gss_qop_t, gss_buffer_t, int*, gss_buffer_t) {
  return refuse(minor);
}

}  // extern "C"

// libFuzzer target for RPCSEC_GSS (rpc/gss/): byte 0 picks one of the
// described RFC 2203 types (credential, INIT argument and result, integrity
// and privacy bodies; see described_round_trip.h for what must hold), or a
// whole call message that goes through a Dispatcher with a GssServer whose
// service key sits in an in-memory keytab: hostile credentials, handles,
// verifiers, INIT tokens and wrapped bodies must get a refusal, never a
// crash, hang or leak.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>

#include <krb5/krb5.h>

#include "rpc/dispatcher.h"
#include "rpc/gss/gss_server.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "rpc/program.h"
#include "tests/fuzz/described_round_trip.h"
#include "xdr/buffer_chain.h"

namespace nfs3d {
namespace {

rpc::ProcResult Null(void*, const rpc::CallContext&, xdr::Decoder&, xdr::Encoder&) {
  return rpc::ProcResult::kSuccess;
}
const rpc::Procedure kProcs[] = {{0, "NULL", Null}};

// nfs/localhost@FUZZ.TEST with a fixed AES key, in a MEMORY keytab that
// lives as long as the process (its handle stays open).
krb5_context keytab_ctx = nullptr;  // reachable for the leak checker
krb5_keytab keytab = nullptr;

bool MakeKeytab() {
  if (krb5_init_context(&keytab_ctx) != 0) return false;
  krb5_principal principal = nullptr;
  if (krb5_kt_resolve(keytab_ctx, "MEMORY:rpcsec_gss_fuzz", &keytab) != 0 ||
      krb5_parse_name(keytab_ctx, "nfs/localhost@FUZZ.TEST", &principal) != 0) {
    return false;
  }
  static uint8_t key[32] = {1,  2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16,
                            17, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32};
  krb5_keytab_entry entry{};
  entry.principal = principal;
  entry.vno = 1;
  entry.key.enctype = ENCTYPE_AES256_CTS_HMAC_SHA1_96;
  entry.key.length = sizeof(key);
  entry.key.contents = key;
  const bool added = krb5_kt_add_entry(keytab_ctx, keytab, &entry) == 0;
  krb5_free_principal(keytab_ctx, principal);
  return added;
}

struct Server {
  Server() {
    if (!MakeKeytab()) std::abort();
    rpc::gss::GssServerOptions o;
    o.keytab = "MEMORY:rpcsec_gss_fuzz";
    o.principal = "nfs/localhost@FUZZ.TEST";
    o.max_contexts = 64;
    auto created = rpc::gss::GssServer::Create(o);
    if (!created.ok()) std::abort();
    gss = std::move(*created);
    program = rpc::SingleVersionProgram(100003, "nfs", 3, kProcs, nullptr);
    dispatcher = std::make_unique<rpc::Dispatcher>(rpc::DispatcherOptions{.wrapping = gss.get()});
    dispatcher->AddProgram(&program);
  }
  std::unique_ptr<rpc::gss::GssServer> gss;
  rpc::Program program;
  std::unique_ptr<rpc::Dispatcher> dispatcher;
};

Server* server = nullptr;  // one for the process, reachable for the leak checker

void WholeCall(const uint8_t* data, size_t size) {
  if (server == nullptr) server = new Server();
  rpc::TransportInfo transport{};
  xdr::BufferChain reply;
  server->dispatcher->HandleCall(absl::Span<const uint8_t>(data, size), transport, &reply);
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace nfs3d::rpc::gss;
  if (size == 0) return 0;
  if (data[0] % 6 == 5) {
    nfs3d::WholeCall(data + 1, size - 1);
    return 0;
  }
  nfs3d::fuzz::RoundTripOneOf<GssCred, GssInitArg, GssInitRes, GssIntegData, GssPrivData>(data,
                                                                                          size);
  return 0;
}

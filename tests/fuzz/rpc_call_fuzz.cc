// libFuzzer target for the RPC headers and credential decoding
// (rpc/rpc_message.h, rpc/rpc_auth.h): any bytes either decode into a call
// header whose credential parses within RFC 5531's limits, or are refused;
// the call and reply header descriptions (the clients' side) round-trip.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "rpc/rpc_auth.h"
#include "rpc/rpc_message.h"
#include "tests/fuzz/described_round_trip.h"
#include "xdr/decoder.h"

namespace {

void Fuzz(const uint8_t* data, size_t size) {
  nfs3d::fuzz::RoundTrip<nfs3d::rpc::CallHeader>(data, size);
  nfs3d::fuzz::RoundTrip<nfs3d::rpc::ReplyHeader>(data, size);
  nfs3d::xdr::Decoder in(data, size);
  nfs3d::rpc::CallHeader header;
  auto disposition = nfs3d::rpc::DecodeCallHeader(in, &header);
  if (in.position() > size) std::abort();
  if (disposition != nfs3d::rpc::HeaderDisposition::kOk) return;
  if (header.cred.body.size() > 400 || header.verf.body.size() > 400) std::abort();
  nfs3d::rpc::Credential cred;
  auto stat = nfs3d::rpc::Authenticate(header.cred, header.verf, &cred);
  if (stat != nfs3d::rpc::AuthStat::kOk) return;
  if (cred.gids.size() > 16 || cred.machine.size() > 255) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  Fuzz(data, size);
  return 0;
}

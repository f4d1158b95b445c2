#include "rpc/tls/tls_probe.h"

#include "common/auth_flavor.h"
#include "rpc/rpc_message.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::tls {

namespace {
constexpr uint8_t kStartTls[] = {'S', 'T', 'A', 'R', 'T', 'T', 'L', 'S'};
}  // namespace

std::optional<uint32_t> ProbeXid(absl::Span<const uint8_t> record) {
  xdr::Decoder in(record);
  CallHeader header;
  if (DecodeCallHeader(in, &header) != HeaderDisposition::kOk) return std::nullopt;
  if (header.proc != 0 || header.cred.flavor != kAuthTls || !header.cred.body.empty() ||
      header.verf.flavor != kAuthNone || !header.verf.body.empty() || in.remaining() != 0) {
    return std::nullopt;
  }
  return header.xid;
}

void EncodeStartTlsReply(uint32_t xid, xdr::BufferChain* reply) {
  ReplyHeader header{.xid = xid};
  header.verf.flavor = kAuthNone;
  header.verf.body = absl::MakeConstSpan(kStartTls);
  header.accept_stat = static_cast<uint32_t>(AcceptStat::kSuccess);
  xdr::Encoder out(reply);
  xdr::Encode(out, header);
}

}  // namespace nfs3d::rpc::tls

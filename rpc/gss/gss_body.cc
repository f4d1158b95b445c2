#include "rpc/gss/gss_body.h"

#include <algorithm>
#include <array>
#include <utility>

#include "absl/container/inlined_vector.h"

#include "rpc/gss/gss_util.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::gss {
namespace {

// The leading seq_num of an opened body, and what follows it.
std::optional<absl::Span<const uint8_t>> AfterSeq(absl::Span<const uint8_t> body, uint32_t seq) {
  if (body.size() < 4 || ReadBigEndian(body.data()) != seq) return std::nullopt;
  return body.subspan(4);
}

}  // namespace

bool AppendIntegData(GssProtection& ctx, uint32_t seq, xdr::BufferChain body, size_t from,
                     xdr::BufferChain* out) {
  body.ReadFileSegments();  // the MIC reads every byte
  const std::array<uint8_t, 4> seq_be = BigEndian(seq);
  absl::InlinedVector<absl::Span<const uint8_t>, 8> pieces;
  pieces.push_back(seq_be);
  size_t skip = from;
  for (const xdr::BufferChain::Segment& s : body.segments()) {
    if (skip >= s.len) {
      skip -= s.len;
      continue;
    }
    pieces.push_back({s.data + skip, s.len - skip});
    skip = 0;
  }
  GssProtection::Mic mic;
  if (!ctx.GetMic(pieces, &mic)) return false;
  const size_t len = body.size() - from;
  xdr::Encoder e(out);
  e.U32(static_cast<uint32_t>(4 + len));  // databody_integ
  e.FixedOpaque(seq_be);
  out->AppendChain(std::move(body), from);  // a multiple of 4: no padding
  e.Opaque(mic);                            // checksum
  return true;
}

bool AppendPrivData(GssProtection& ctx, uint32_t seq, const xdr::BufferChain& body, size_t from,
                    xdr::BufferChain* out) {
  const size_t len = 4 + body.size() - from;
  const std::optional<GssProtection::SealLayout> layout = ctx.SealSize(len);
  if (!layout.has_value()) return false;
  const size_t token = layout->token;
  xdr::Encoder e(out);
  e.U32(static_cast<uint32_t>(token));
  uint8_t* at = out->Reserve(xdr::PadTo4(token));
  // seq, then the body: the one copy, sealed where it lands.
  const std::array<uint8_t, 4> seq_be = BigEndian(seq);
  uint8_t* data = at + layout->data_offset;
  std::copy(seq_be.begin(), seq_be.end(), data);
  body.CopyTo(from, len - 4, data + 4);
  if (!ctx.Seal({at, token}, len)) return false;
  std::fill(at + token, at + xdr::PadTo4(token), 0);
  out->Commit(xdr::PadTo4(token));
  return true;
}

std::optional<absl::Span<const uint8_t>> OpenIntegData(GssProtection& ctx, uint32_t seq,
                                                       absl::Span<const uint8_t> wire) {
  GssIntegData integ;
  xdr::Decoder in(wire);
  if (!xdr::Decode(in, &integ) || in.remaining() != 0) return std::nullopt;
  const absl::Span<const uint8_t> pieces[] = {integ.body};
  if (ctx.VerifyMic(pieces, integ.checksum) != GssProtection::Check::kGood) return std::nullopt;
  return AfterSeq(integ.body, seq);
}

std::optional<absl::Span<const uint8_t>> OpenPrivData(GssProtection& ctx, uint32_t seq,
                                                      absl::Span<uint8_t> wire) {
  GssPrivData priv;
  xdr::Decoder in(wire);
  if (!xdr::Decode(in, &priv) || in.remaining() != 0) return std::nullopt;
  uint8_t* token = wire.data() + (priv.body.data() - wire.data());
  std::optional<absl::Span<uint8_t>> plain = ctx.Unseal({token, priv.body.size()});
  if (!plain.has_value()) return std::nullopt;
  return AfterSeq(*plain, seq);
}

}  // namespace nfs3d::rpc::gss

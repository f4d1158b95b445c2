#include "rpc/gss/gss_body.h"

#include <gssapi/gssapi_ext.h>

#include <array>
#include <utility>
#include <vector>

#include "rpc/gss/gss_util.h"
#include "rpc/gss/rpcsec_gss_types.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc::gss {
namespace {

gss_iov_buffer_desc Iov(OM_uint32 type, void* data = nullptr, size_t len = 0) {
  return gss_iov_buffer_desc{type, gss_buffer_desc{len, data}};
}

// The leading seq_num of an opened body, and what follows it.
std::optional<absl::Span<const uint8_t>> AfterSeq(absl::Span<const uint8_t> body, uint32_t seq) {
  if (body.size() < 4 || ReadBigEndian(body.data()) != seq) return std::nullopt;
  return body.subspan(4);
}

}  // namespace

bool AppendIntegData(gss_ctx_id_t ctx, uint32_t seq, xdr::BufferChain body, size_t from,
                     xdr::BufferChain* out) {
  body.ReadFileSegments();  // the MIC reads every byte
  const std::array<uint8_t, 4> seq_be = BigEndian(seq);
  std::vector<gss_iov_buffer_desc> iov;
  iov.reserve(body.segments().size() + 2);
  iov.push_back(Iov(GSS_IOV_BUFFER_TYPE_DATA, const_cast<uint8_t*>(seq_be.data()), 4));
  size_t skip = from;
  for (const xdr::BufferChain::Segment& s : body.segments()) {
    if (skip >= s.len) {
      skip -= s.len;
      continue;
    }
    iov.push_back(
        Iov(GSS_IOV_BUFFER_TYPE_DATA, const_cast<uint8_t*>(s.data + skip), s.len - skip));
    skip = 0;
  }
  iov.push_back(Iov(GSS_IOV_BUFFER_TYPE_MIC_TOKEN | GSS_IOV_BUFFER_FLAG_ALLOCATE));
  OM_uint32 minor = 0;
  if (GSS_ERROR(gss_get_mic_iov(&minor, ctx, GSS_C_QOP_DEFAULT, iov.data(),
                                static_cast<int>(iov.size())))) {
    gss_release_iov_buffer(&minor, iov.data(), static_cast<int>(iov.size()));
    return false;
  }
  const gss_buffer_desc& mic = iov.back().buffer;
  const size_t len = body.size() - from;
  xdr::Encoder e(out);
  e.U32(static_cast<uint32_t>(4 + len));  // databody_integ
  e.FixedOpaque(seq_be);
  out->AppendChain(std::move(body), from);  // a multiple of 4: no padding
  e.Opaque({static_cast<const uint8_t*>(mic.value), mic.length});  // checksum
  gss_release_iov_buffer(&minor, iov.data(), static_cast<int>(iov.size()));
  return true;
}

bool AppendPrivData(gss_ctx_id_t ctx, uint32_t seq, const xdr::BufferChain& body, size_t from,
                    xdr::BufferChain* out) {
  const size_t len = 4 + body.size() - from;
  // Token = header | seq, body (encrypted in place) | padding | trailer.
  std::array<gss_iov_buffer_desc, 4> iov = {
      Iov(GSS_IOV_BUFFER_TYPE_HEADER), Iov(GSS_IOV_BUFFER_TYPE_DATA, nullptr, len),
      Iov(GSS_IOV_BUFFER_TYPE_PADDING), Iov(GSS_IOV_BUFFER_TYPE_TRAILER)};
  OM_uint32 minor = 0;
  int confidential = 0;
  if (GSS_ERROR(gss_wrap_iov_length(&minor, ctx, 1, GSS_C_QOP_DEFAULT, &confidential, iov.data(),
                                    static_cast<int>(iov.size())))) {
    return false;
  }
  size_t token = 0;
  for (const gss_iov_buffer_desc& b : iov) token += b.buffer.length;
  xdr::Encoder e(out);
  e.U32(static_cast<uint32_t>(token));
  uint8_t* at = out->Reserve(xdr::PadTo4(token));
  for (gss_iov_buffer_desc& b : iov) {
    b.buffer.value = at;
    at += b.buffer.length;
  }
  const std::array<uint8_t, 4> seq_be = BigEndian(seq);
  auto* data = static_cast<uint8_t*>(iov[1].buffer.value);
  std::copy(seq_be.begin(), seq_be.end(), data);
  body.CopyTo(from, len - 4, data + 4);
  if (GSS_ERROR(gss_wrap_iov(&minor, ctx, 1, GSS_C_QOP_DEFAULT, &confidential, iov.data(),
                             static_cast<int>(iov.size()))) ||
      confidential == 0) {
    return false;
  }
  std::fill(at, at + (xdr::PadTo4(token) - token), 0);
  out->Commit(xdr::PadTo4(token));
  return true;
}

std::optional<absl::Span<const uint8_t>> OpenIntegData(gss_ctx_id_t ctx, uint32_t seq,
                                                       absl::Span<const uint8_t> wire) {
  GssIntegData integ;
  xdr::Decoder in(wire);
  if (!xdr::Decode(in, &integ) || in.remaining() != 0) return std::nullopt;
  // The iov form checksums the body where it lies (gss_verify_mic copies it).
  std::array<gss_iov_buffer_desc, 2> iov = {
      Iov(GSS_IOV_BUFFER_TYPE_DATA, const_cast<uint8_t*>(integ.body.data()), integ.body.size()),
      Iov(GSS_IOV_BUFFER_TYPE_MIC_TOKEN, const_cast<uint8_t*>(integ.checksum.data()),
          integ.checksum.size())};
  OM_uint32 minor = 0;
  if (GSS_ERROR(gss_verify_mic_iov(&minor, ctx, nullptr, iov.data(), static_cast<int>(iov.size())))) {
    return std::nullopt;
  }
  return AfterSeq(integ.body, seq);
}

std::optional<absl::Span<const uint8_t>> OpenPrivData(gss_ctx_id_t ctx, uint32_t seq,
                                                      absl::Span<uint8_t> wire) {
  GssPrivData priv;
  xdr::Decoder in(wire);
  if (!xdr::Decode(in, &priv) || in.remaining() != 0) return std::nullopt;
  uint8_t* token = wire.data() + (priv.body.data() - wire.data());
  std::array<gss_iov_buffer_desc, 2> iov = {
      Iov(GSS_IOV_BUFFER_TYPE_STREAM, token, priv.body.size()), Iov(GSS_IOV_BUFFER_TYPE_DATA)};
  OM_uint32 minor = 0;
  int confidential = 0;
  if (GSS_ERROR(gss_unwrap_iov(&minor, ctx, &confidential, nullptr, iov.data(),
                               static_cast<int>(iov.size()))) ||
      confidential == 0) {
    return std::nullopt;
  }
  return AfterSeq({static_cast<const uint8_t*>(iov[1].buffer.value), iov[1].buffer.length}, seq);
}

}  // namespace nfs3d::rpc::gss

#include "xdr/encoder.h"

#include <cstring>

#include "xdr/decoder.h"

namespace nfs3d::xdr {
namespace {
constexpr uint8_t kZeros[4] = {0, 0, 0, 0};

void PutU32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}
}  // namespace

void Encoder::U32(uint32_t v) {
  uint8_t b[4];
  PutU32(b, v);
  out_->Append(b, 4);
}

void Encoder::U64(uint64_t v) {
  uint8_t b[8];
  PutU32(b, static_cast<uint32_t>(v >> 32));
  PutU32(b + 4, static_cast<uint32_t>(v));
  out_->Append(b, 8);
}

void Encoder::FixedOpaque(absl::Span<const uint8_t> bytes) {
  out_->Append(bytes.data(), bytes.size());
  size_t pad = PadTo4(bytes.size()) - bytes.size();
  if (pad) out_->Append(kZeros, pad);
}

void Encoder::Opaque(absl::Span<const uint8_t> bytes) {
  U32(static_cast<uint32_t>(bytes.size()));
  FixedOpaque(bytes);
}

void Encoder::String(std::string_view s) {
  Opaque(absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(s.data()), s.size()));
}

uint8_t* Encoder::ReserveOpaque(size_t max) {
  // Length word + body + up to 3 padding bytes, contiguous.
  reserved_ = out_->Reserve(4 + PadTo4(max));
  return reserved_ + 4;
}

void Encoder::CommitOpaque(size_t n) {
  PutU32(reserved_, static_cast<uint32_t>(n));
  size_t padded = PadTo4(n);
  std::memset(reserved_ + 4 + n, 0, padded - n);
  out_->Commit(4 + padded);
  reserved_ = nullptr;
}

}  // namespace nfs3d::xdr

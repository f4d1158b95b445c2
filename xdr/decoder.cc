#include "xdr/decoder.h"

namespace nfs3d::xdr {

bool Decoder::Need(size_t n) {
  if (failed_ || n > size_ - pos_) {
    failed_ = true;
    return false;
  }
  return true;
}

uint32_t Decoder::U32() {
  if (!Need(4)) return 0;
  const uint8_t* p = data_ + pos_;
  pos_ += 4;
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

uint64_t Decoder::U64() {
  uint64_t high = U32();
  uint64_t low = U32();
  return failed_ ? 0 : (high << 32) | low;
}

bool Decoder::Bool() {
  uint32_t v = U32();
  if (v > 1) failed_ = true;
  return v == 1;
}

absl::Span<const uint8_t> Decoder::FixedOpaque(size_t len) {
  size_t padded = PadTo4(len);
  if (padded < len) {  // overflow: no buffer is that large
    failed_ = true;
    return {};
  }
  if (!Need(padded)) return {};
  absl::Span<const uint8_t> out(data_ + pos_, len);
  pos_ += padded;
  return out;
}

absl::Span<const uint8_t> Decoder::Opaque(uint32_t max) {
  uint32_t len = U32();
  if (len > max) {
    failed_ = over_limit_ = true;
    return {};
  }
  return FixedOpaque(len);
}

std::string_view Decoder::String(uint32_t max) {
  absl::Span<const uint8_t> bytes = Opaque(max);
  return std::string_view(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

uint32_t Decoder::ArrayLength(uint32_t max, size_t min_element_size) {
  uint32_t n = U32();
  if (failed_) return 0;
  if (n > max || (min_element_size > 0 && n > remaining() / min_element_size)) {
    failed_ = true;
    return 0;
  }
  return n;
}

}  // namespace nfs3d::xdr

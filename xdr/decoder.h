// Bounds-checked XDR (RFC 4506) decoder over a borrowed byte buffer.
//
// Errors are sticky: the first read past the end (or a length over its limit)
// marks the decoder failed, and every later read returns zero/empty. Codecs
// therefore read a whole structure and check ok() once at the end. Variable
// length data is returned as spans into the buffer, never copied.
#ifndef NFS3D_XDR_DECODER_H_
#define NFS3D_XDR_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "absl/types/span.h"

namespace nfs3d::xdr {

class Decoder {
 public:
  Decoder(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  explicit Decoder(absl::Span<const uint8_t> bytes) : Decoder(bytes.data(), bytes.size()) {}

  bool ok() const { return !failed_; }
  void Fail() { failed_ = true; }
  // The failure was a length over its limit, not running out of bytes (an
  // RPC header answers an over-long credential rather than dropping it).
  bool over_limit() const { return over_limit_; }
  size_t position() const { return pos_; }
  size_t remaining() const { return failed_ ? 0 : size_ - pos_; }
  // The undecoded tail of the buffer (e.g. procedure arguments after the RPC header).
  absl::Span<const uint8_t> Rest() const {
    return failed_ ? absl::Span<const uint8_t>()
                   : absl::Span<const uint8_t>(data_ + pos_, size_ - pos_);
  }

  uint32_t U32();
  int32_t I32() { return static_cast<int32_t>(U32()); }
  uint64_t U64();
  int64_t I64() { return static_cast<int64_t>(U64()); }
  // XDR bool: any value other than 0 or 1 is malformed.
  bool Bool();
  // Fixed-length opaque: len bytes plus padding to a multiple of four.
  absl::Span<const uint8_t> FixedOpaque(size_t len);
  // Variable-length opaque<max>: a length (rejected if > max) then the bytes.
  absl::Span<const uint8_t> Opaque(uint32_t max);
  // string<max>: as Opaque; the bytes are not validated (NFS names are bytes).
  std::string_view String(uint32_t max);
  // Array length prefix, rejected if > max or if the remaining buffer cannot
  // possibly hold that many elements of at least min_element_size bytes each
  // (so a hostile count cannot trigger a huge reservation).
  uint32_t ArrayLength(uint32_t max, size_t min_element_size = 4);

 private:
  bool Need(size_t n);

  const uint8_t* data_;
  size_t size_;
  size_t pos_ = 0;
  bool failed_ = false;
  bool over_limit_ = false;
};

inline size_t PadTo4(size_t n) { return (n + 3) & ~size_t{3}; }

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_DECODER_H_

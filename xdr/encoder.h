// XDR (RFC 4506) encoder appending to a BufferChain.
#ifndef NFS3D_XDR_ENCODER_H_
#define NFS3D_XDR_ENCODER_H_

#include <cstdint>
#include <string_view>

#include "absl/types/span.h"

#include "xdr/buffer_chain.h"

namespace nfs3d::xdr {

class Encoder {
 public:
  explicit Encoder(BufferChain* out) : out_(out) {}

  void U32(uint32_t v);
  void I32(int32_t v) { U32(static_cast<uint32_t>(v)); }
  void U64(uint64_t v);
  void I64(int64_t v) { U64(static_cast<uint64_t>(v)); }
  void Bool(bool v) { U32(v ? 1 : 0); }
  // Bytes plus zero padding to a multiple of four (no length).
  void FixedOpaque(absl::Span<const uint8_t> bytes);
  // Length, bytes, padding.
  void Opaque(absl::Span<const uint8_t> bytes);
  void String(std::string_view s);

  // Bulk data without a copy: ReserveOpaque(max) returns room for up to max
  // bytes of an opaque's body; after filling it, CommitOpaque(n) writes the
  // length n, the bytes and padding. Used by READ: pread goes straight here.
  // The length word is written in front of the reserved area, so nothing may
  // be encoded between the two calls.
  uint8_t* ReserveOpaque(size_t max);
  void CommitOpaque(size_t n);

  BufferChain* chain() { return out_; }

 private:
  BufferChain* out_;
  uint8_t* reserved_ = nullptr;
};

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_ENCODER_H_

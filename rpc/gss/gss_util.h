// Small GSS-API helpers shared by the RPCSEC_GSS server and the test
// initiator: buffers in and out of GSS-API, big-endian sequence numbers as
// RFC 2203 signs them, and readable GSS-API errors.
#ifndef NFS3D_RPC_GSS_GSS_UTIL_H_
#define NFS3D_RPC_GSS_GSS_UTIL_H_

#include <gssapi/gssapi.h>

#include <array>
#include <cstdint>
#include <string>

#include "absl/types/span.h"

namespace nfs3d::rpc::gss {

// A buffer GSS-API allocated, released when it goes.
struct OutBuffer {
  OutBuffer() = default;
  OutBuffer(const OutBuffer&) = delete;
  OutBuffer& operator=(const OutBuffer&) = delete;
  ~OutBuffer() {
    OM_uint32 minor = 0;
    gss_release_buffer(&minor, &b);
  }
  absl::Span<const uint8_t> span() const {
    return {static_cast<const uint8_t*>(b.value), b.length};
  }
  gss_buffer_desc b = GSS_C_EMPTY_BUFFER;
};

// Our bytes as GSS-API input (it does not write through it).
inline gss_buffer_desc In(absl::Span<const uint8_t> bytes) {
  return gss_buffer_desc{bytes.size(), const_cast<uint8_t*>(bytes.data())};
}

// An XDR unsigned int: what the verifiers and protected bodies carry.
inline std::array<uint8_t, 4> BigEndian(uint32_t v) {
  return {static_cast<uint8_t>(v >> 24), static_cast<uint8_t>(v >> 16),
          static_cast<uint8_t>(v >> 8), static_cast<uint8_t>(v)};
}
inline uint32_t ReadBigEndian(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

// gss_display_status of both codes, "; "-separated.
std::string GssErrorText(OM_uint32 major, OM_uint32 minor);

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_GSS_UTIL_H_

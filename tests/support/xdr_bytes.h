// A value's XDR encoding as a string, for codec tests. Header-only; Encode is
// found by argument-dependent lookup.
#ifndef NFS3D_TESTS_SUPPORT_XDR_BYTES_H_
#define NFS3D_TESTS_SUPPORT_XDR_BYTES_H_

#include <string>

#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"

namespace nfs3d::test_support {

template <typename T>
std::string XdrBytes(const T& value) {
  xdr::BufferChain chain;
  xdr::Encoder e(&chain);
  Encode(e, value);
  return chain.Flatten();
}

}  // namespace nfs3d::test_support

#endif  // NFS3D_TESTS_SUPPORT_XDR_BYTES_H_

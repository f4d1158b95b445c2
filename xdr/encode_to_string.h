// A value's XDR encoding as one string: for small messages built off the hot
// path (NLM/NSM callbacks, cached replies) and for codec tests. The value's
// Encode overload is found by argument-dependent lookup.
#ifndef NFS3D_XDR_ENCODE_TO_STRING_H_
#define NFS3D_XDR_ENCODE_TO_STRING_H_

#include <string>

#include "xdr/buffer_chain.h"
#include "xdr/encoder.h"

namespace nfs3d::xdr {

template <typename T>
std::string EncodeToString(const T& value) {
  BufferChain chain;
  Encoder e(&chain);
  Encode(e, value);
  return chain.Flatten();
}

}  // namespace nfs3d::xdr

#endif  // NFS3D_XDR_ENCODE_TO_STRING_H_

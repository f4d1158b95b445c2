// Which TCP records carry WRITE data a transport may splice from the socket
// into a pipe instead of reading it into memory (TcpOptions::splice_writes).
// The transport looks at the start of a record while its body is still
// arriving; everything here reads only bytes already received.
#ifndef NFS3D_RPC_WRITE_SPLICE_H_
#define NFS3D_RPC_WRITE_SPLICE_H_

#include <cstddef>
#include <cstdint>

#include "absl/types/span.h"

namespace nfs3d::rpc {

// Where an NFSv3 WRITE's arguments and data lie in its record.
struct WriteLayout {
  size_t args_begin = 0;  // first byte of the arguments (after the RPC header)
  size_t data_begin = 0;  // first byte of the data opaque
  uint32_t data_len = 0;  // the opaque's length, equal to the count argument
};

enum class WritePeek : uint8_t {
  kNotWrite,  // not an NFSv3 WRITE whose data can be spliced: read it as usual
  kNeedMore,  // the head is not all there yet
  kWrite,     // *layout says where the data is
};

// Looks at the first bytes of a call record. kWrite only for a well-formed
// head (CALL, RPC v2, NFS v3 WRITE, credential and verifier within RFC 5531's
// 400 bytes, a file handle of at most 64 bytes) whose data length equals its
// count: anything unusual takes the ordinary path, whose decoder reports it.
WritePeek PeekWrite(absl::Span<const uint8_t> head, WriteLayout* layout);

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_WRITE_SPLICE_H_

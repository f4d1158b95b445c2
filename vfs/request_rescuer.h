// How a vfs wrapper that cannot bound its inner calls (DeadlineBackend) has
// the request a thread serves answered by someone else. Implemented above
// vfs (the RPC layer, which still has the call's bytes and its connection;
// the daemon registers it), so vfs includes no rpc/ header.
#ifndef NFS3D_VFS_REQUEST_RESCUER_H_
#define NFS3D_VFS_REQUEST_RESCUER_H_

namespace nfs3d::vfs {

class RequestRescuer {
 public:
  virtual ~RequestRescuer() = default;

  // The request the calling thread serves, if AnswerNow can answer it; null
  // otherwise (then nobody but this thread can answer it).
  virtual void* Current() const = 0;

  // Has `request` (a Current() of another thread) answered now, from another
  // thread, while its own thread stays inside the backend; that thread's
  // late reply is then dropped. Must not block. `request` stays valid until
  // its thread's backend call returns, which the caller holds off meanwhile.
  virtual void AnswerNow(void* request) = 0;
};

}  // namespace nfs3d::vfs

#endif  // NFS3D_VFS_REQUEST_RESCUER_H_

// RFC 2203 §5.3.3.1 sequence window of one RPCSEC_GSS context: accepts each
// sequence number at most once, and only while it is within `size` of the
// highest one seen, so a replayed or very late call is discarded.
#ifndef NFS3D_RPC_GSS_SEQ_WINDOW_H_
#define NFS3D_RPC_GSS_SEQ_WINDOW_H_

#include <bitset>
#include <cstdint>

namespace nfs3d::rpc::gss {

class SeqWindow {
 public:
  static constexpr uint32_t kMaxSize = 256;

  // size is clamped to [1, kMaxSize].
  explicit SeqWindow(uint32_t size) : size_(size == 0 ? 1 : size > kMaxSize ? kMaxSize : size) {}

  uint32_t size() const { return size_; }

  // True the first time `seq` is offered while it is inside the window; the
  // window then moves up to it if it is the highest so far.
  bool Accept(uint32_t seq) {
    if (!started_ || seq > highest_) {
      const uint32_t shift = started_ ? seq - highest_ : kMaxSize;
      seen_ = shift >= kMaxSize ? std::bitset<kMaxSize>() : seen_ << shift;
      seen_.set(0);
      highest_ = seq;
      started_ = true;
      return true;
    }
    const uint32_t age = highest_ - seq;
    if (age >= size_ || seen_.test(age)) return false;
    seen_.set(age);
    return true;
  }

 private:
  uint32_t size_;
  bool started_ = false;
  uint32_t highest_ = 0;
  std::bitset<kMaxSize> seen_;  // bit i: highest_ - i was accepted
};

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_SEQ_WINDOW_H_

// RFC 2203 §5.3.3.1 sequence window of one RPCSEC_GSS context: accepts each
// sequence number at most once, so a replayed call is discarded.
//
// The window the server announces (`size`) bounds how far a client may run
// ahead of its oldest unanswered call. Calls are checked here only when a
// worker takes them up, not when they arrive: one that waited behind a slow
// call (a metadata batch, a busy pool) can find the window moved past it by
// calls that arrived after it, though the client sent it well inside the
// window (nfs3bench: a CREATE with 16 in flight, dropped at seq 6 after
// seq 134 had run, never answered). So numbers are remembered much further
// back than the announced window, kTracked of them: an unseen number within
// that reach is accepted, a seen one is still refused, and only older ones
// are dropped unseen.
#ifndef NFS3D_RPC_GSS_SEQ_WINDOW_H_
#define NFS3D_RPC_GSS_SEQ_WINDOW_H_

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>

namespace nfs3d::rpc::gss {

class SeqWindow {
 public:
  // Largest window announced to clients.
  static constexpr uint32_t kMaxSize = 256;
  // Sequence numbers remembered below the highest one seen.
  static constexpr uint32_t kTracked = 4096;

  // size is clamped to [1, kMaxSize].
  explicit SeqWindow(uint32_t size) : size_(size == 0 ? 1 : size > kMaxSize ? kMaxSize : size) {}

  // The window announced to the client.
  uint32_t size() const { return size_; }

  // The window's state, for a handover: Restore in another process accepts
  // and refuses exactly what this one would have.
  struct Saved {
    uint32_t size = 0;
    bool started = false;
    uint32_t highest = 0;
    std::string seen;  // kTracked / 8 bytes, bit i of byte j: slot 8 * j + i
  };
  Saved Save() const {
    Saved out{size_, started_, highest_, std::string(kTracked / 8, '\0')};
    for (uint32_t i = 0; i < kTracked; ++i) {
      if (seen_.test(i)) out.seen[i / 8] = static_cast<char>(out.seen[i / 8] | (1 << (i % 8)));
    }
    return out;
  }
  // Nothing when `saved` is not the shape Save gives.
  static std::optional<SeqWindow> Restore(const Saved& saved) {
    if (saved.seen.size() != kTracked / 8) return std::nullopt;
    SeqWindow w(saved.size);
    w.started_ = saved.started;
    w.highest_ = saved.highest;
    for (uint32_t i = 0; i < kTracked; ++i) {
      if ((static_cast<uint8_t>(saved.seen[i / 8]) >> (i % 8)) & 1) w.seen_.set(i);
    }
    return w;
  }

  // True the first time `seq` is offered while it is within kTracked of the
  // highest so far; the window then moves up to it if it is the highest.
  bool Accept(uint32_t seq) {
    if (!started_ || seq > highest_) {
      // Numbers skipped on the way up are unseen: clear their slots, which
      // held numbers kTracked lower. Usually the window moves by one.
      if (!started_ || seq - highest_ >= kTracked) {
        seen_.reset();
      } else {
        for (uint32_t s = highest_ + 1; s != seq; ++s) seen_.reset(s % kTracked);
      }
      seen_.set(seq % kTracked);
      highest_ = seq;
      started_ = true;
      return true;
    }
    if (highest_ - seq >= kTracked || seen_.test(seq % kTracked)) return false;
    seen_.set(seq % kTracked);
    return true;
  }

 private:
  uint32_t size_;
  bool started_ = false;
  uint32_t highest_ = 0;
  // A ring: bit seq % kTracked tells whether seq was accepted, for the
  // kTracked numbers up to highest_ (no shifting of 512 bytes per call).
  std::bitset<kTracked> seen_;
};

}  // namespace nfs3d::rpc::gss

#endif  // NFS3D_RPC_GSS_SEQ_WINDOW_H_

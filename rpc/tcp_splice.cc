// TcpConnection's spliced WRITEs: the data of a large WRITE goes from the
// socket into a pipe and from there into the file (rpc/write_splice.h), never
// through user space; reading the rest of the record around it. The rest of
// the connection (reading calls, dispatching them, writing replies) is in
// tcp_server.cc.
#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

#include "common/log.h"
#include "rpc/tcp_server.h"
#include "rpc/write_splice.h"

namespace nfs3d::rpc {

namespace asio = boost::asio;
using boost::system::error_code;

namespace {
// A spliced WRITE keeps in memory the arguments' first kDrcHead bytes and the
// data's last kDrcTail bytes: what the duplicate request cache checksums
// (DuplicateCache::MakeKey), so a retransmission matches on either path.
constexpr size_t kDrcHead = 512;
constexpr size_t kDrcTail = 64;
// Less data than this left to splice is read as usual.
constexpr size_t kMinSplice = 16 << 10;
}  // namespace

TcpConnection::SpliceStep TcpConnection::StartSplice() {
  if (!splice_.active) {
    const SpliceStep begin = BeginSplice();
    if (!splice_.active) return begin;
  }
  // The same bound as StartDirectRead: splicing may complete a record.
  if (AtCallLimit() && WaitForReplies()) return SpliceStep::kWaiting;
  return SpliceSome();
}

TcpConnection::SpliceStep TcpConnection::BeginSplice() {
  const size_t min = context_->options().splice_writes;
  if (min == 0 || splice_.decided || reassembler_.body_left() == 0) return SpliceStep::kNo;
  WriteLayout w;
  switch (PeekWrite(reassembler_.Partial(), &w)) {
    case WritePeek::kNotWrite:
      splice_.decided = true;
      return SpliceStep::kNo;
    case WritePeek::kNeedMore:
      return SpliceStep::kShortHead;
    case WritePeek::kWrite:
      break;
  }
  const size_t have = reassembler_.size();
  if (w.data_len < std::max(min, kDrcHead + kDrcTail)) {
    splice_.decided = true;
    return SpliceStep::kNo;
  }
  if (have < w.args_begin + kDrcHead) return SpliceStep::kShortHead;
  const size_t stop = w.data_begin + w.data_len - kDrcTail;
  if (have >= stop || stop - have < kMinSplice) {
    splice_.decided = true;
    return SpliceStep::kNo;
  }
  splice_.decided = true;
  SplicePipe pipe = SplicePipe::Take();
  if (!pipe.valid()) return SpliceStep::kNo;  // e.g. EMFILE: read it into memory
  splice_.hole.pipe = std::move(pipe);
  splice_.hole.begin = have;
  splice_.hole.size = 0;
  splice_.stop = stop;
  splice_.active = true;
  return SpliceStep::kNo;
}

TcpConnection::SpliceStep TcpConnection::SpliceSome() {
  const int sock = socket_.native_handle();
  auto wait_readable = [this](size_t bytes) {
    reading_ = true;
    SetReadLowWater(static_cast<int>(std::min<size_t>(bytes, 1 << 20)));
    socket_.async_wait(asio::socket_base::wait_read,
                       [self = shared_from_this()](const error_code& ec) {
                         self->reading_ = false;
                         if (ec) {
                           self->OnRead(ec, 0);
                         } else {
                           self->ReadMore();
                         }
                       });
    return SpliceStep::kWaiting;
  };
  auto fail = [this](const error_code& ec) {
    splice_.active = false;
    OnRead(ec, 0);
    return SpliceStep::kWaiting;
  };
  // A record that ends inside the data (a malformed call) goes to the
  // workers, whose decoder reports it.
  auto record_done = [this] {
    splice_.active = false;
    NoteReceived();  // the record's last bytes came by splice or recv here
    if (DispatchCompleted() == Dispatched::kWaits) return SpliceStep::kWaiting;
    FlushBatches();
    asio::post(socket_.get_executor(), [self = shared_from_this()] { self->ReadMore(); });
    return SpliceStep::kWaiting;
  };
  for (;;) {
    const size_t pos = reassembler_.size();
    if (pos >= splice_.stop) {
      splice_.active = false;  // the data's tail and what follows: as usual
      return SpliceStep::kNo;
    }
    if (const size_t header = reassembler_.header_needed(); header > 0) {
      // The record goes on in another fragment: read its header (only).
      uint8_t mark[4];
      const ssize_t n = recv(sock, mark, header, MSG_DONTWAIT);
      if (n > 0) {
        size_t used = 0;
        const RecordReassembler::Result r =
            reassembler_.Feed(absl::MakeConstSpan(mark, static_cast<size_t>(n)), &used);
        if (r == RecordReassembler::Result::kError) {
          NFS3D_LOG_WARNING("tcp: closing connection: %s", reassembler_.error());
          splice_.active = false;
          DoClose();
          return SpliceStep::kWaiting;
        }
        if (r == RecordReassembler::Result::kRecord) return record_done();
        continue;
      }
      if (n == 0) return fail(asio::error::eof);
      if (errno == EINTR) continue;
      if (errno == EAGAIN) return wait_readable(1);
      return fail(error_code(errno, asio::error::get_system_category()));
    }
    const size_t want = std::min(splice_.stop - pos, reassembler_.body_left());
    const ssize_t n = splice(sock, nullptr, splice_.hole.pipe.write_fd(), nullptr, want,
                             SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
    if (n > 0) {
      splice_.hole.size += static_cast<size_t>(n);
      if (reassembler_.CommitElsewhere(static_cast<size_t>(n)) ==
          RecordReassembler::Result::kRecord) {
        return record_done();
      }
      continue;
    }
    if (n == 0) return fail(asio::error::eof);
    if (errno == EINTR) continue;
    if (errno != EAGAIN) return fail(error_code(errno, asio::error::get_system_category()));
    int queued = 0;
    if (ioctl(sock, FIONREAD, &queued) != 0 || queued <= 0) return wait_readable(want);
    // Bytes are queued but did not move: the pipe is full (its slots hold
    // less than a page each when the NIC hands over small fragments). Its
    // bytes go into the record, and splicing goes on into the empty pipe.
    // An empty pipe that takes nothing: read the rest as usual.
    if (splice_.hole.size == 0) {
      splice_.active = false;
      return SpliceStep::kNo;
    }
    if (!SpillPipe()) {
      splice_.active = false;
      DoClose();
      return SpliceStep::kWaiting;
    }
  }
}

bool TcpConnection::SpillPipe() {
  NFS3D_LOG_DEBUG("tcp: splice pipe full at %u bytes; reading them into the record",
                  splice_.hole.size);
  uint8_t* at = reassembler_.Partial().data() + splice_.hole.begin;
  size_t done = 0;
  while (done < splice_.hole.size) {
    const ssize_t n = read(splice_.hole.pipe.read_fd(), at + done, splice_.hole.size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      NFS3D_LOG_ERROR("tcp: reading back spliced data: %s", n < 0 ? strerror(errno) : "short");
      return false;
    }
    done += static_cast<size_t>(n);
  }
  splice_.hole.begin += splice_.hole.size;
  splice_.hole.size = 0;
  return true;
}

bool TcpConnection::StartDirectRead(size_t max) {
  // Inside the body of a big fragment (a WRITE's data) the socket is read
  // straight into the record: no copy out of read_buf_, and fewer, larger
  // reads. The connection's in-flight bound applies before a record can
  // complete; its server-wide slot is taken once it has (DispatchCompleted).
  const size_t room = reassembler_.DirectRoom(max);
  if (room == 0) return false;
  if (AtCallLimit() && WaitForReplies()) return true;
  reading_ = true;
  // Wait until the whole chunk is queued, then take it with one recv: a
  // 1 MiB WRITE arriving in bursts would otherwise cost a wakeup and a read
  // per burst (strace: 7 reads and 6 epoll_waits per WRITE). Meanwhile the
  // bytes wait in the kernel: a record that stops arriving costs no memory
  // here.
  SetReadLowWater(static_cast<int>(room));
  socket_.async_wait(asio::socket_base::wait_read,
                     [self = shared_from_this(), room](const error_code& ec) {
                       if (ec) {
                         self->OnDirectRead(ec, 0);
                       } else {
                         self->ReadDirect(room);
                       }
                     });
  return true;
}

void TcpConnection::ReadDirect(size_t room) {
  // Room is made for the bytes that came (the record grows as it arrives),
  // and they count against the client's share before they are read.
  const int fd = socket_.native_handle();
  int queued = 0;
  if (ioctl(fd, FIONREAD, &queued) != 0 || queued <= 0) queued = 1;  // EOF or an error: recv says
  const size_t want = std::min(room, static_cast<size_t>(queued));
  if (!HoldUnfinished(reassembler_.size() + want)) {
    reading_ = false;
    return;
  }
  absl::Span<uint8_t> direct = reassembler_.DirectSpan(want);
  const ssize_t n = recv(fd, direct.data(), direct.size(), MSG_DONTWAIT);
  if (n > 0) {
    OnDirectRead(error_code(), static_cast<size_t>(n));
  } else if (n == 0) {
    OnDirectRead(asio::error::eof, 0);
  } else if (errno == EAGAIN || errno == EINTR) {
    OnDirectRead(error_code(), 0);  // nothing read: try again
  } else {
    OnDirectRead(error_code(errno, asio::error::get_system_category()), 0);
  }
}

void TcpConnection::SetReadLowWater(int bytes) {
  if (bytes == read_low_water_) return;
  // On failure the mark stays where it was: reads only wake more often.
  if (setsockopt(socket_.native_handle(), SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) == 0) {
    read_low_water_ = bytes;
  }
}

void TcpConnection::OnDirectRead(const error_code& ec, size_t n) {
  if (closed_) {
    reading_ = false;
    return;
  }
  if (ec) {
    OnRead(ec, 0);
    return;
  }
  reading_ = false;
  NoteReceived();
  if (n > 0) last_active_ns_.store(SteadyNowNs(), std::memory_order_relaxed);
  if (reassembler_.CommitDirect(n) == RecordReassembler::Result::kRecord) {
    const Dispatched dispatched = DispatchCompleted();
    if (dispatched == Dispatched::kWaits) return;  // it reads on once it has a slot
    FlushBatches();
    if (dispatched == Dispatched::kUsedTheTurn) {
      YieldTurn();
      return;
    }
  }
  ReadMore();
}

}  // namespace nfs3d::rpc

#include "rpc/dispatcher.h"

#include <algorithm>
#include <exception>
#include <optional>
#include <string>

#include "common/log.h"
#include "rpc/rpc_auth.h"
#include "rpc/rpc_message.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {
namespace {

// Runs one row, turning an escaping exception into SYSTEM_ERR: procedures
// must not throw, but a bad_alloc must not take the worker thread down.
ProcResult RunRow(const Procedure& row, void* service, const CallContext& ctx, xdr::Decoder& args,
                  xdr::Encoder& results) {
  try {
    return row.run(service, ctx, args, results);
  } catch (const std::exception& e) {
    NFS3D_LOG_ERROR("rpc: %s threw: %s", row.name, e.what());
  } catch (...) {
    NFS3D_LOG_ERROR("rpc: %s threw", row.name);
  }
  return ProcResult::kSystemErr;
}

}  // namespace

Dispatcher::Dispatcher(DispatcherOptions options)
    : stats_(options.stats), wrapping_(options.wrapping) {
  if (options.enable_drc) drc_ = std::make_unique<DuplicateCache>(options.drc);
}

Dispatcher::~Dispatcher() {
  if (drc_ == nullptr) return;
  // Until there are metrics, the counters go to the log once, at shutdown.
  DuplicateCacheStats s = drc_->stats();
  NFS3D_LOG_INFO("drc: %d hits, %d in-progress drops, %d evictions, %d calls cached", s.hits,
                 s.in_progress_drops, s.evictions, s.insertions);
}

void Dispatcher::AddProgram(const Program* program) {
  if (stats_ != nullptr) {
    for (const ProgramVersion& v : program->versions) {
      std::vector<std::string> names;
      for (const Procedure& p : v.procedures) names.emplace_back(p.name);
      stats_->AddProgramVersion(program->number, v.version, program->name, names);
    }
  }
  for (const Program*& p : programs_) {
    if (p->number == program->number) {
      p = program;
      return;
    }
  }
  programs_.push_back(program);
}

const Program* Dispatcher::FindProgram(uint32_t prog) const {
  for (const Program* p : programs_) {
    if (p->number == prog) return p;
  }
  return nullptr;
}

std::vector<std::pair<uint32_t, uint32_t>> Dispatcher::Registered() const {
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const Program* p : programs_) {
    for (const ProgramVersion& v : p->versions) out.emplace_back(p->number, v.version);
  }
  return out;
}

DuplicateCacheStats Dispatcher::drc_stats() const {
  return drc_ ? drc_->stats() : DuplicateCacheStats{};
}

bool Dispatcher::HandleCall(absl::Span<const uint8_t> message, const TransportInfo& transport,
                            xdr::BufferChain* reply) {
  reply->Clear();
  // Records this call in the statistics when HandleCall returns.
  stats::CallRecorder rec(stats_, static_cast<int>(transport.transport), reply);
  rec.Peer(transport.peer);
  xdr::Decoder in(message);
  CallHeader header;
  HeaderDisposition disposition = DecodeCallHeader(in, &header);
  const uint32_t xid = header.xid;
  {
    xdr::Encoder out(reply);
    switch (disposition) {
      case HeaderDisposition::kOk:
        break;
      case HeaderDisposition::kDrop:
        NFS3D_LOG_DEBUG("rpc: dropping malformed call message (%u bytes)", message.size());
        rec.Event(stats::RpcEvent::kMalformed);
        return false;
      case HeaderDisposition::kRpcMismatch:
        rec.Event(stats::RpcEvent::kRpcMismatch);
        EncodeRpcMismatchReply(out, xid);
        return true;
      case HeaderDisposition::kBadCred:
        rec.Event(stats::RpcEvent::kAuthError);
        EncodeAuthErrorReply(out, xid, AuthStat::kBadCred);
        return true;
      case HeaderDisposition::kBadVerf:
        rec.Event(stats::RpcEvent::kAuthError);
        EncodeAuthErrorReply(out, xid, AuthStat::kBadVerf);
        return true;
    }
  }

  CallContext ctx;
  ctx.xid = xid;
  ctx.prog = header.prog;
  ctx.vers = header.vers;
  ctx.proc = header.proc;
  ctx.transport = &transport;
  // Authentication comes before program lookup, as in RFC 5531 servers
  // generally: an unauthenticated caller learns nothing about our programs.
  if (wrapping_ != nullptr && header.cred.flavor == wrapping_->flavor()) {
    std::unique_ptr<WrappingFlavor::Call> call;
    switch (wrapping_->Accept(message, header, in.position(), transport, &call, reply)) {
      case WrappingFlavor::Verdict::kReplied:
        return true;
      case WrappingFlavor::Verdict::kRefused:
        rec.Event(stats::RpcEvent::kAuthError);
        return true;
      case WrappingFlavor::Verdict::kGarbageArgs:
        rec.Event(stats::RpcEvent::kGarbageArgs);
        return true;
      case WrappingFlavor::Verdict::kDrop:
        rec.Event(stats::RpcEvent::kDropped);
        return false;
      case WrappingFlavor::Verdict::kRun:
        break;
    }
    ctx.cred = std::move(call->cred);        // Seal needs the call, not its credential
    std::optional<TransportInfo> in_memory;  // made only when needed: most calls splice as is
    if (call->seal_reads_results && transport.file_segments) {
      in_memory.emplace(transport);
      in_memory->file_segments = false;  // READ data read once, into memory
      ctx.transport = &*in_memory;
    }
    rec.AuthFlavor(ctx.cred.flavor);
    rec.User(ctx.cred.flavor, ctx.cred.uid, ctx.cred.machine);
    // A DRC replay is sealed afresh too: the cache holds the plain reply, and
    // the retransmission's new sequence number needs a new verifier.
    if (!Dispatch(header, call->args, ctx, call->drc_identity, rec, reply)) return false;
    rec.Settle();  // statistics read the plain results
    if (wrapping_->Seal(*call, reply)) return true;
    reply->Clear();
    return false;
  }
  AuthStat auth = header.cred.flavor == kAuthTls
                      ? AuthenticateTlsProbe(header, transport, &ctx.cred)
                      : Authenticate(header.cred, header.verf, &ctx.cred);
  if (auth != AuthStat::kOk) {
    rec.Event(stats::RpcEvent::kAuthError);
    xdr::Encoder out(reply);
    EncodeAuthErrorReply(out, xid, auth);
    return true;
  }
  rec.AuthFlavor(ctx.cred.flavor);
  rec.User(ctx.cred.flavor, ctx.cred.uid, ctx.cred.machine);
  return Dispatch(header, in.Rest(), ctx, {}, rec, reply);
}

namespace {

// The row of `program` a call names; nullptr once the PROG_UNAVAIL,
// PROG_MISMATCH or PROC_UNAVAIL reply is in `reply`.
const Procedure* FindRow(const Program* program, const CallHeader& header, stats::CallRecorder& rec,
                         xdr::BufferChain* reply) {
  const uint32_t xid = header.xid;
  if (program == nullptr || program->versions.empty()) {
    xdr::Encoder out(reply);
    rec.Event(stats::RpcEvent::kProgUnavail);
    EncodeAcceptedReply(out, xid, AcceptStat::kProgUnavail);
    return nullptr;
  }
  const ProgramVersion* version = nullptr;
  uint32_t low = UINT32_MAX;
  uint32_t high = 0;
  for (const ProgramVersion& v : program->versions) {
    low = std::min(low, v.version);
    high = std::max(high, v.version);
    if (v.version == header.vers) version = &v;
  }
  if (version == nullptr) {
    xdr::Encoder out(reply);
    rec.Event(stats::RpcEvent::kProgMismatch);
    EncodeProgMismatchReply(out, xid, low, high);
    return nullptr;
  }
  if (header.proc >= version->procedures.size() ||
      version->procedures[header.proc].run == nullptr) {
    xdr::Encoder out(reply);
    rec.Event(stats::RpcEvent::kProcUnavail);
    EncodeAcceptedReply(out, xid, AcceptStat::kProcUnavail);
    return nullptr;
  }
  return &version->procedures[header.proc];
}

}  // namespace

bool Dispatcher::Dispatch(const CallHeader& header, absl::Span<const uint8_t> args,
                          CallContext& ctx, std::string_view drc_identity, stats::CallRecorder& rec,
                          xdr::BufferChain* reply) {
  const uint32_t xid = header.xid;
  const TransportInfo& transport = *ctx.transport;
  const Program* program = FindProgram(header.prog);
  const Procedure* found = FindRow(program, header, rec, reply);
  if (found == nullptr) return true;
  const Procedure& row = *found;
  ctx.procedure = &row;
  rec.Procedure(header.prog, header.vers, header.proc);

  std::optional<DrcKey> drc_key;
  uint64_t drc_token = 0;
  if (drc_ != nullptr && !row.idempotent && !transport.answered_early) {
    drc_key = DuplicateCache::MakeKey(transport, xid, header.prog, header.vers, header.proc, args);
    if (!drc_identity.empty()) drc_key->peer.append(1, '\0').append(drc_identity);
    std::string cached;
    DuplicateCache::Begin begin = drc_->Start(*drc_key, &cached);
    switch (begin.outcome) {
      case DuplicateCache::Outcome::kReplay:
        NFS3D_LOG_DEBUG("rpc: replaying cached reply for xid %08x (%s)", xid, row.name);
        rec.Event(stats::RpcEvent::kDrcReplay);
        reply->Append(cached.data(), cached.size());
        return true;
      case DuplicateCache::Outcome::kInProgress:
        NFS3D_LOG_DEBUG("rpc: dropping duplicate of in-progress xid %08x (%s)", xid, row.name);
        rec.Event(stats::RpcEvent::kDrcInProgress);
        return false;
      case DuplicateCache::Outcome::kNew:
        drc_token = begin.token;
        break;
    }
  }

  ProcResult result;
  {
    xdr::Encoder out(reply);
    EncodeAcceptedReply(out, xid, AcceptStat::kSuccess);
    rec.ResultsAt(reply->size());
    xdr::Decoder args_in(args);
    result = RunRow(row, program->service, ctx, args_in, out);
  }
  rec.Ran(program->name, row.name, xid, args);
  if (ctx.export_known) rec.Export(ctx.export_id);

  if (result == ProcResult::kSuccess && ctx.reject_auth != 0) {
    if (drc_key) drc_->Abandon(*drc_key, drc_token);
    rec.Event(stats::RpcEvent::kAuthError);
    reply->Clear();
    xdr::Encoder out(reply);
    EncodeAuthErrorReply(out, xid, static_cast<AuthStat>(ctx.reject_auth));
    return true;
  }
  switch (result) {
    case ProcResult::kSuccess:
      if (drc_key) drc_->Complete(*drc_key, drc_token, reply->Flatten());
      return true;
    case ProcResult::kGarbageArgs:
    case ProcResult::kSystemErr: {
      // Nothing ran to completion, so nothing is worth replaying: a
      // retransmission simply runs (and fails) again.
      if (drc_key) drc_->Abandon(*drc_key, drc_token);
      rec.Event(result == ProcResult::kGarbageArgs ? stats::RpcEvent::kGarbageArgs
                                                   : stats::RpcEvent::kSystemErr);
      reply->Clear();
      xdr::Encoder out(reply);
      EncodeAcceptedReply(
          out, xid,
          result == ProcResult::kGarbageArgs ? AcceptStat::kGarbageArgs : AcceptStat::kSystemErr);
      return true;
    }
    case ProcResult::kDrop:
      if (drc_key) drc_->Abandon(*drc_key, drc_token);
      rec.Event(stats::RpcEvent::kDropped);
      reply->Clear();
      return false;
  }
  return false;
}

}  // namespace nfs3d::rpc

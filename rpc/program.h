// The procedure table model: a program is data. Each row names a procedure,
// the function that decodes its arguments, runs it and encodes its results,
// and the policy flags generic code applies (duplicate request cache, read-only
// exports, reply sizing). Handlers never repeat that policy.
#ifndef NFS3D_RPC_PROGRAM_H_
#define NFS3D_RPC_PROGRAM_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"

#include "rpc/call_context.h"
#include "xdr/decoder.h"
#include "xdr/encoder.h"

namespace nfs3d::rpc {

// What running a procedure produced.
enum class ProcResult : uint8_t {
  kSuccess,      // results were encoded; reply SUCCESS
  kGarbageArgs,  // arguments did not decode; reply GARBAGE_ARGS
  kSystemErr,    // could not run (e.g. out of memory); reply SYSTEM_ERR
  kDrop,         // send no reply at all (client will retransmit)
};

// Decodes args, runs, encodes results. `service` is Program::service.
using ProcFn = ProcResult (*)(void* service, const CallContext& ctx, xdr::Decoder& args,
                              xdr::Encoder& results);

struct Procedure {
  uint32_t number = 0;
  const char* name = "";
  ProcFn run = nullptr;    // nullptr: PROC_UNAVAIL
  bool idempotent = true;  // false: the reply is kept in the duplicate request cache
  bool modifies = false;   // true: refused on read-only exports
  uint32_t max_reply = 0;  // upper bound of the encoded results, bytes (0: small)
};

struct ProgramVersion {
  uint32_t version = 0;
  // Indexed by procedure number: procedures[i].number == i.
  absl::Span<const Procedure> procedures;
};

struct Program {
  uint32_t number = 0;
  const char* name = "";
  std::vector<ProgramVersion> versions;
  void* service = nullptr;  // handed to every ProcFn of this program
};

// A program with one version: the common case (NFS, NFSACL, NSM).
inline Program SingleVersionProgram(uint32_t number, const char* name, uint32_t version,
                                    absl::Span<const Procedure> procedures, void* service) {
  Program program;
  program.number = number;
  program.name = name;
  program.versions.push_back(ProgramVersion{version, procedures});
  program.service = service;
  return program;
}

// Adapts a typed handler to a ProcFn, for a handler that may send no reply:
// it returns ProcResult::kDrop (or kSuccess). Args and Res need
//   bool Decode(xdr::Decoder&, Args*);   void Encode(xdr::Encoder&, const Res&);
// found by argument-dependent lookup. For a program without a "try later"
// status: MOUNT while the file system asks to try later (NFS would answer
// JUKEBOX) lets the client's RPC retransmission be the retry, as a mountd
// whose export lookup did not finish drops the call.
template <typename Service, typename Args, typename Res,
          ProcResult (*Fn)(Service&, const CallContext&, const Args&, Res*)>
ProcResult TypedProcOrDrop(void* service, const CallContext& ctx, xdr::Decoder& args_in,
                           xdr::Encoder& results) {
  Args args{};
  if (!Decode(args_in, &args) || !args_in.ok()) return ProcResult::kGarbageArgs;
  Res res{};
  if (Fn(*static_cast<Service*>(service), ctx, args, &res) == ProcResult::kDrop) {
    return ProcResult::kDrop;
  }
  Encode(results, res);
  return ProcResult::kSuccess;
}

// A handler that always replies: void Fn(Service&, const CallContext&, const Args&, Res*).
template <typename Service, typename Args, typename Res,
          void (*Fn)(Service&, const CallContext&, const Args&, Res*)>
ProcResult AlwaysReplies(Service& service, const CallContext& ctx, const Args& args, Res* res) {
  Fn(service, ctx, args, res);
  return ProcResult::kSuccess;
}
template <typename Service, typename Args, typename Res,
          void (*Fn)(Service&, const CallContext&, const Args&, Res*)>
ProcResult TypedProc(void* service, const CallContext& ctx, xdr::Decoder& args_in,
                     xdr::Encoder& results) {
  return TypedProcOrDrop<Service, Args, Res, AlwaysReplies<Service, Args, Res, Fn>>(
      service, ctx, args_in, results);
}

}  // namespace nfs3d::rpc

#endif  // NFS3D_RPC_PROGRAM_H_

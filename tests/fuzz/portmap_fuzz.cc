// libFuzzer target for the embedded portmapper/rpcbind: byte 0 picks the
// version (2, 3, 4) and whether the caller is on loopback (SET/UNSET are
// honoured only then), byte 1 the procedure, the rest is the arguments, run
// through the program's own table against a fresh registry. The argument
// descriptions also go through described_round_trip.h.
#include <arpa/inet.h>
#include <netinet/in.h>

#include <cstdlib>

#include "rpc/portmap_program.h"
#include "tests/fuzz/described_round_trip.h"
#include "xdr/buffer_chain.h"

namespace nfs3d {
namespace {

void Fuzz(const uint8_t* data, size_t size) {
  if (size < 2) return;
  fuzz::RoundTrip<rpc::PmapMapping>(data + 2, size - 2);
  fuzz::RoundTrip<rpc::RpcbArgs>(data + 2, size - 2);
  fuzz::RoundTrip<rpc::RpcbEntry>(data + 2, size - 2);

  rpc::PortmapRegistry registry;
  registry.AddLocal(100003, 3, "tcp", 2049);
  registry.AddLocal(100003, 3, "udp6", 2049);
  rpc::Program program = rpc::MakePortmapProgram(&registry);
  const rpc::ProgramVersion& version = program.versions[data[0] % program.versions.size()];
  if (data[1] >= version.procedures.size()) return;
  const rpc::Procedure& proc = version.procedures[data[1]];
  if (proc.run == nullptr) return;

  rpc::TransportInfo transport;
  transport.transport = (data[0] & 0x10) ? rpc::Transport::kTcp : rpc::Transport::kUdp;
  auto* peer = reinterpret_cast<sockaddr_in*>(&transport.peer);
  peer->sin_family = AF_INET;
  peer->sin_addr.s_addr = htonl((data[0] & 0x20) ? 0x7f000001 : 0x0a000001);
  transport.local = transport.peer;
  rpc::CallContext ctx;
  ctx.prog = program.number;
  ctx.vers = version.version;
  ctx.proc = proc.number;
  ctx.transport = &transport;
  ctx.procedure = &proc;

  xdr::Decoder args(data + 2, size - 2);
  xdr::BufferChain chain;
  xdr::Encoder results(&chain);
  proc.run(program.service, ctx, args, results);
  if (args.position() > size - 2) std::abort();
  if (proc.max_reply != 0 && chain.size() > proc.max_reply) std::abort();
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}

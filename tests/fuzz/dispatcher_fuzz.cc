// libFuzzer target for a whole RPC call through the Dispatcher with the real
// NFSv3 and MOUNT programs over a PosixBackend: header, credential, program
// and version lookup, the duplicate request cache, argument decoding,
// authorization and the procedures themselves.
//
// The export is read-only (modifying procedures stop at ROFS), so inputs
// cannot fill the disk. Since handles carry a MAC the fuzzer cannot forge,
// the opaque<64> "\0\0\0\4ROOT" / "\0\0\0\4FILE" / "\0\0\0\4DIR_" in an input
// is replaced by the real handle of the export root / a file / a directory,
// so mutations of the seeds reach the procedures; "\0\0\0\4EXPO" becomes
// the export's path (a string) for MOUNT.
//
// Input: byte 0 = transport (bit 0: TCP) and source port (bit 1:
// privileged); the rest is the call message.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "common/log.h"
#include "conf/exports.h"
#include "nfsd/mount_program.h"
#include "nfsd/nfs3_program.h"
#include "nfsd/nfs_server.h"
#include "nfsd/nfsacl_program.h"
#include "rpc/dispatcher.h"
#include "vfs/posix/posix_backend.h"
#include "xdr/buffer_chain.h"

namespace nfs3d {
namespace {

struct World {
  std::string dir;
  std::unique_ptr<vfs::PosixBackend> backend;
  std::unique_ptr<nfsd::NfsServer> nfs;
  std::unique_ptr<nfsd::MountService> mount;
  rpc::Program nfs_program, mount_program, nfsacl_program;
  std::unique_ptr<rpc::Dispatcher> dispatcher;
  std::string root, file, subdir;  // encoded opaque<64> handles (length + bytes)
  std::string path;                // the export path as an encoded string
};

std::string EncodedOpaque(const void* data, uint32_t len) {
  std::string out(4, '\0');
  uint32_t be = htonl(len);
  std::memcpy(out.data(), &be, 4);
  out.append(static_cast<const char*>(data), len);
  while (out.size() % 4) out.push_back('\0');
  return out;
}
std::string EncodedHandle(const vfs::FileHandle& fh) { return EncodedOpaque(fh.data, fh.len); }

World* MakeWorld() {
  log::SetLevel(log::Level::kError);
  auto* w = new World;
  char tmpl[] = "/tmp/nfs3d-dispatcher-fuzz.XXXXXX";
  if (mkdtemp(tmpl) == nullptr) std::abort();
  w->dir = tmpl;
  const std::string exp = w->dir + "/export";
  mkdir(exp.c_str(), 0755);
  mkdir((exp + "/dir").c_str(), 0755);
  std::ofstream(exp + "/file") << "hello, fuzzer\n";
  std::ofstream(exp + "/dir/inner") << "inner\n";
  if (symlink("/", (exp + "/link").c_str()) != 0) std::abort();
  vfs::PosixBackendOptions options;
  options.state_dir = w->dir + "/state";
  mkdir(options.state_dir.c_str(), 0700);
  auto backend = vfs::PosixBackend::Create(options);
  if (!backend.ok()) std::abort();
  w->backend = std::move(*backend);
  auto table = conf::ParseExports(exp + " 127.0.0.1(ro,no_root_squash) *(ro,insecure)\n", "fuzz");
  if (!table.ok()) std::abort();
  for (const auto& e : table->exports) {
    if (!w->backend->AddExport(e.export_id, e.path).ok()) std::abort();
  }
  const uint32_t id = table->exports[0].export_id;
  w->nfs = std::make_unique<nfsd::NfsServer>(
      w->backend.get(), std::make_shared<const conf::ExportTable>(std::move(*table)));
  w->mount = std::make_unique<nfsd::MountService>(w->nfs.get());
  w->nfs_program = nfsd::Nfs3Program(w->nfs.get());
  w->mount_program = nfsd::MakeMountProgram(w->mount.get());
  w->nfsacl_program = nfsd::NfsAclProgram(w->nfs.get());
  rpc::DispatcherOptions d;
  d.drc.max_entries = 64;  // small: eviction gets exercised too
  w->dispatcher = std::make_unique<rpc::Dispatcher>(d);
  w->dispatcher->AddProgram(&w->nfs_program);
  w->dispatcher->AddProgram(&w->mount_program);
  w->dispatcher->AddProgram(&w->nfsacl_program);

  auto root = w->backend->RootHandle(id);
  if (!root.ok()) std::abort();
  vfs::Cred cred;
  cred.uid = 0;
  cred.gid = 0;
  auto file = w->backend->Lookup(cred, *root, "file", nullptr);
  auto sub = w->backend->Lookup(cred, *root, "dir", nullptr);
  if (!file.ok() || !sub.ok()) std::abort();
  w->root = EncodedHandle(*root);
  w->file = EncodedHandle(file->handle);
  w->subdir = EncodedHandle(sub->handle);
  w->path = EncodedOpaque(exp.data(), static_cast<uint32_t>(exp.size()));
  return w;
}

// Replaces every marker opaque with the real handle. A marker is the length
// word 4 then a tag; only there are the tags compared (comparing at every
// byte, through the fuzzer's memcmp hooks, was a fifth of each run).
std::string Substitute(const World& w, const uint8_t* data, size_t size) {
  static constexpr char kTags[4][5] = {"ROOT", "FILE", "DIR_", "EXPO"};
  const std::string* handles[4] = {&w.root, &w.file, &w.subdir, &w.path};
  std::string out;
  out.reserve(size + 64);
  size_t i = 0;
  while (i < size) {
    const uint8_t* p = data + i;
    int found = -1;
    if (size - i >= 8 && p[3] == 4 && p[0] == 0 && p[1] == 0 && p[2] == 0) {
      for (int k = 0; k < 4 && found < 0; ++k) {
        if (std::memcmp(p + 4, kTags[k], 4) == 0) found = k;
      }
    }
    if (found >= 0) {
      out += *handles[found];
      i += 8;
    } else {
      out.push_back(static_cast<char>(*p));
      ++i;
    }
  }
  return out;
}

void Fuzz(const uint8_t* data, size_t size) {
  static World* world = MakeWorld();
  if (size == 0) return;
  rpc::TransportInfo t;
  t.transport = (data[0] & 1) ? rpc::Transport::kTcp : rpc::Transport::kUdp;
  auto* peer = reinterpret_cast<sockaddr_in*>(&t.peer);
  peer->sin_family = AF_INET;
  peer->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  peer->sin_port = htons((data[0] & 2) ? 800 : 40000);
  t.peer_len = sizeof(sockaddr_in);
  std::memcpy(&t.local, &t.peer, sizeof(sockaddr_in));
  t.local_len = sizeof(sockaddr_in);
  t.mtu = (data[0] & 4) ? 1500 : 0;
  const std::string message = Substitute(*world, data + 1, size - 1);
  xdr::BufferChain reply;
  bool send = world->dispatcher->HandleCall(
      absl::Span<const uint8_t>(reinterpret_cast<const uint8_t*>(message.data()), message.size()),
      t, &reply);
  if (send) {
    std::string bytes = reply.Flatten();
    // Every reply starts with the call's xid and REPLY (1).
    if (bytes.size() < 8 || std::memcmp(bytes.data(), message.data(), 4) != 0) std::abort();
  }
}

}  // namespace
}  // namespace nfs3d

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  nfs3d::Fuzz(data, size);
  return 0;
}

// Prepares CephFS for the lab tests, as a Ceph administrator would with a
// native client: directories, files, quotas (xattrs) and snapshots.
//   cephfs_lab_tool CLUSTER_DIR mkdir PATH MODE(octal)
//   cephfs_lab_tool CLUSTER_DIR write PATH TEXT
//   cephfs_lab_tool CLUSTER_DIR setxattr PATH NAME VALUE
//   cephfs_lab_tool CLUSTER_DIR mksnap DIR NAME
// CLUSTER_DIR holds ceph.conf and the client.admin keyring
// (tests/fixtures/ceph-cluster.sh).
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tests/vfs/cephfs/native_client.h"

int main(int argc, char** argv) {
  const std::vector<std::string> a(argv + 1, argv + argc);
  auto usage = [] {
    std::fprintf(stderr, "usage: cephfs_lab_tool CLUSTER_DIR mkdir|write|setxattr|mksnap ...\n");
    return 2;
  };
  if (a.size() < 4) return usage();
  auto client = nfs3d::test_support::NativeClient::Mount(a[0]);
  if (!client.ok()) {
    std::fprintf(stderr, "mount: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  const std::string& cmd = a[1];
  absl::Status st;
  if (cmd == "mkdir" && a.size() == 4) {
    st = (*client)->Mkdir(a[2], static_cast<int>(std::strtol(a[3].c_str(), nullptr, 8)));
  } else if (cmd == "write" && a.size() == 4) {
    st = (*client)->WriteFile(a[2], a[3]);
  } else if (cmd == "setxattr" && a.size() == 5) {
    st = (*client)->SetXattr(a[2], a[3], a[4]);
  } else if (cmd == "mksnap" && a.size() == 4) {
    st = (*client)->MakeSnapshot(a[2], a[3]);
  } else {
    return usage();
  }
  if (!st.ok()) {
    std::fprintf(stderr, "%s: %s\n", cmd.c_str(), std::string(st.message()).c_str());
    return 1;
  }
  return 0;
}

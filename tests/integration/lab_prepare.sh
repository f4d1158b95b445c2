#!/bin/bash
# Makes the lab VM's cached pieces (packages, the UDP-enabled NFS modules,
# the initramfs) before any lab test boots a VM: the lab tests run two at a
# time, and two first runs must not build the same cache at once. Quick when
# the cache is there. The other guest kernels (5.10, 6.12: lab_mount_k5_10,
# lab_open_trunc_k6_12, lab_tls) are fetched here too, once.
TEST_NAME=lab_prepare
source "$(dirname "$0")/lib.sh"
[ -x "$LAB" ] || fail "no lab at $LAB (set NFS_LAB, or NFS3D_SKIP_LAB=1 to leave the lab tests out)"
"$LAB" prepare
"$LAB" prepare --kernel 5.10
"$LAB" prepare --kernel 6.12

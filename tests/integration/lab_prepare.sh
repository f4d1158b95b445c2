#!/bin/bash
# Makes the lab VM's cached pieces (packages, the UDP-enabled NFS modules,
# the initramfs) before any lab test boots a VM: the lab tests run two at a
# time, and two first runs must not build the same cache at once. Quick when
# the cache is there.
TEST_NAME=lab_prepare
source "$(dirname "$0")/lib.sh"
[ -x "$LAB" ] || fail "no lab at $LAB (set NFS_LAB, or NFS3D_SKIP_LAB=1 to leave the lab tests out)"
"$LAB" prepare

#!/bin/bash
# Installs what nfs3d needs to build and test on Debian 12, skipping what is
# already there (idempotent). Run as root.
set -euo pipefail

# go-md2man renders the man pages (docs/man/*.md); libkrb5-dev brings MIT
# Kerberos' GSS-API for RPCSEC_GSS (sec=krb5, krb5i, krb5p); libssl-dev the
# OpenSSL crypto that per-message krb5i/krb5p tokens are computed with;
# libgnutls28-dev the TLS handshake of RPC-with-TLS (xprtsec=tls, mtls).
BUILD_PKGS=(build-essential cmake ninja-build pkg-config libboost1.81-dev libabsl-dev
            libtirpc-dev libgtest-dev go-md2man libkrb5-dev libssl-dev libgnutls28-dev)
# Real clients and tools used by the tests: rpcinfo (rpcbind), showmount (nfs-common),
# nfs-cp (libnfs-utils), clang for the fuzz targets, iproute2 for the lab;
# for the Debian package test: debhelper, dpkg-dev, fakeroot, lintian to
# build and check it, systemd (systemd-analyze verify), man-db (man -l),
# util-linux (unshare, nsenter); acl (getfacl/setfacl) for the NFSACL lab test;
# a one-node Ceph cluster (tests/fixtures/ceph-cluster.sh) and libcephfs-dev for the
# CephFS backend (optional when building: nfs3d builds without it); a test
# Kerberos realm (tests/fixtures/krb5-kdc.sh: krb5kdc, kdb5_util, kadmin.local, kinit);
# tcpdump to check that krb5p traffic carries no clear text (lab_krb5);
# python3-prometheus-client parses /metrics (stats.metrics_parse); prometheus
# (server and promtool) checks and evaluates docs/prometheus (stats.prometheus_rules);
# tmux runs nfs3top as a person would (stats.origin_views);
# clang-format-14 and clang-tidy-14 for scripts/check-format.sh and
# scripts/check-tidy.sh; quota (the client's quota(1)) asks nfs3d's RQUOTA
# in the lab test; keepalived moves the heads' floating addresses in
# lab_heads (and bench/multihead.sh); ccache lets the trees of one checkout
# share their compiles (CI builds the quick start's configuration too);
# openssl makes the RPC-with-TLS tests' certificates (tls_make_certs.sh);
# xfsprogs makes the XFS images of the power-cut matrix (bench/powercut.sh;
# e2fsprogs, for ext4, is essential in Debian).
TEST_PKGS=(ccache rpcbind nfs-common libnfs-utils clang iproute2 procps psmisc openssl
           debhelper dpkg-dev fakeroot lintian systemd man-db util-linux acl
           ceph-mon ceph-osd ceph-mds ceph-common libcephfs-dev
           krb5-kdc krb5-admin-server krb5-user tcpdump python3-prometheus-client
           prometheus tmux clang-format-14 clang-tidy-14 quota keepalived xfsprogs)

want=("${BUILD_PKGS[@]}")
[ "${1:-}" = "--test" ] && want+=("${TEST_PKGS[@]}")

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing packages (${missing[*]}); run as root" >&2
  exit 1
fi
export DEBIAN_FRONTEND=noninteractive
echo "install-deps: installing ${missing[*]}" >&2
apt-get update -qq
# rpcbind's postinst may try to start a service; nfs3d's tests start their own.
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null

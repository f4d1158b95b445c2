# shellcheck shell=bash
# Sourced by the benches that run each workload in several modes against one
# nfs3d on a tmpfs export (bench/krb5.sh: security flavors; bench/tls.sh:
# plain, TLS and krb5p), after bench/private_ns.sh. What they share:
#   bench_option OPTION VALUE   takes --nfs3d, --nfs3bench, --rounds, --time and
#                               --workloads (false for any other option)
#   bench_server_setup NAME     $D (a fresh directory) with a tmpfs at $D/export,
#                               removed on exit with nfs3d, and a KDC if one ran
#   bench_kdc_start             a throw-away KDC in $D/kdc (its KRB5_CONFIG exported)
#   bench_server_start OPTS CONF  nfs3d on 2049/20048 exporting $D/export to
#                               127.0.0.1(OPTS), CONF appended to its nfs3d.conf;
#                               returns once it answers
#   bench_rows MODES            for each workload, round and mode, one line
#                               "WORKLOAD MODE ROUND JSON" (bench/mode_table.py reads
#                               them); the script's bench_mode_args MODE sets the
#                               nfs3bench arguments of a mode in MODE_ARGS
# Modes run interleaved (each round runs every mode) so machine noise hits
# them alike.
NFS3D=$REPO/build-release/daemon/nfs3d
BENCH=$REPO/build-release/tools/nfs3bench/nfs3bench
ROUNDS=3
TIME=4
WORKLOADS="write read getattr"
D=
NFS3D_PID=

bench_option() {
  case $1 in
    --nfs3d) NFS3D=$2 ;;
    --nfs3bench) BENCH=$2 ;;
    --rounds) ROUNDS=$2 ;;
    --time) TIME=$2 ;;
    --workloads) WORKLOADS=$2 ;;
    *) return 1 ;;
  esac
}

bench_cleanup() {
  [ -z "$NFS3D_PID" ] || { kill "$NFS3D_PID" 2>/dev/null || true; wait "$NFS3D_PID" 2>/dev/null || true; }
  [ ! -d "$D/kdc" ] || "$REPO/tests/fixtures/krb5-kdc.sh" stop "$D/kdc" >/dev/null 2>&1 || true
  umount "$D/export" 2>/dev/null || true
  rm -rf "$D"
}

bench_server_setup() {
  D=$(mktemp -d "/var/tmp/nfs3d-$1.XXXXXX")
  trap bench_cleanup EXIT
  mkdir -p "$D/state" "$D/export"
  mount -t tmpfs tmpfs "$D/export"
}

bench_kdc_start() {
  "$REPO/tests/fixtures/krb5-kdc.sh" start "$D/kdc" >/dev/null
  # shellcheck disable=SC1091
  . "$D/kdc/env"
  export KRB5_CONFIG
}

bench_server_start() {
  echo "$D/export 127.0.0.1($1)" >"$D/exports"
  printf '[nfsd]\nport = 2049\nmountd_port = 20048\nportmapper = off\n[paths]\nstate_dir = %s\nexports = %s\n%s\n' \
    "$D/state" "$D/exports" "$2" >"$D/nfs3d.conf"
  "$NFS3D" --config "$D/nfs3d.conf" --foreground 2>"$D/nfs3d.log" &
  NFS3D_PID=$!
  for _ in $(seq 50); do
    "$BENCH" run "127.0.0.1:$D/export" --port 2049 --mount-port 20048 --workload getattr \
      --time 0.1 >/dev/null 2>&1 && return 0
    sleep 0.2
  done
  echo "bench: nfs3d did not answer; its log:" >&2
  cat "$D/nfs3d.log" >&2
  return 1
}

# The nfs3bench arguments that krb5.sh and tls.sh give a Kerberos flavor
# (the KDC's client principal and keytab).
bench_krb5_args() {
  MODE_ARGS=(--sec "$1" --krb5-principal daemon --krb5-keytab "$D/kdc/client.keytab"
             --krb5-target nfs@localhost)
}

bench_rows() {
  local w round mode args
  for w in $WORKLOADS; do
    args=(--workload "$w" --outstanding 16 --bs 1m)
    [ "$w" = read ] && args+=(--file-size 128m)
    [ "$w" = getattr ] && args=(--workload getattr --outstanding 32)
    for round in $(seq "$ROUNDS"); do
      for mode in $1; do
        MODE_ARGS=()
        bench_mode_args "$mode"
        "$BENCH" run "127.0.0.1:$D/export" --port 2049 --mount-port 20048 --time "$TIME" \
          --server-pid "$NFS3D_PID" "${args[@]}" "${MODE_ARGS[@]}" 2>/dev/null |
          grep '^{' | sed "s/^/$w $mode $round /"
      done
    done
  done
}

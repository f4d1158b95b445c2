#!/bin/bash
# A throw-away Kerberos realm for tests and benchmarks, from Debian's
# krb5-kdc and krb5-admin-server (kdb5_util, kadmin.local). Everything lives
# in one private directory; nothing touches /etc/krb5.conf or /etc/krb5kdc.
#
#   krb5-kdc.sh start DIR [--realm R] [--host NAME] [--client NAME] [--listen ADDR]
#       Creates DIR with a KDC database for realm R (default NFS3D.TEST),
#       starts krb5kdc on a free port of ADDR (default 127.0.0.1; run the
#       script inside a network namespace to listen there) and writes:
#         DIR/krb5.conf     point KRB5_CONFIG here (realm, KDC, no DNS)
#         DIR/nfs.keytab    nfs/NAME@R (NAME default: localhost), for nfs3d
#         DIR/client.keytab user principals (below), for initiators
#         DIR/env           KRB5_CONFIG=... lines to source
#         DIR/krb5kdc.pid
#       User principals: daemon (a local user on Debian: uid 1),
#       nosuchuser (no local user), host/CLIENT (a machine principal;
#       CLIENT defaults to NAME).
#   krb5-kdc.sh stop DIR
#       SIGTERM to the KDC by its PID, waits for it to exit, removes DIR.
set -euo pipefail

die() { echo "krb5-kdc: $*" >&2; exit 1; }

start() {
  local realm=NFS3D.TEST host=localhost client="" listen=127.0.0.1
  while [ $# -gt 0 ]; do
    case $1 in
      --realm) realm=$2; shift 2 ;;
      --host) host=$2; shift 2 ;;
      --client) client=$2; shift 2 ;;
      --listen) listen=$2; shift 2 ;;
      *) die "unknown option $1" ;;
    esac
  done
  [ -e "$DIR/krb5kdc.pid" ] && die "$DIR already has a running KDC (stop it first)"
  for tool in krb5kdc kdb5_util kadmin.local; do
    command -v "$tool" >/dev/null || die "$tool not found (scripts/install-deps.sh --test)"
  done
  rm -rf "$DIR"
  mkdir -p "$DIR"
  DIR=$(cd "$DIR" && pwd)
  [ -n "$client" ] || client=$host
  local port
  port=$(python3 -c 'import socket,sys; s=socket.socket(); s.bind((sys.argv[1],0)); print(s.getsockname()[1])' "$listen")
  cat >"$DIR/krb5.conf" <<CONF
[libdefaults]
  default_realm = $realm
  dns_lookup_kdc = false
  dns_lookup_realm = false
  dns_canonicalize_hostname = false
  rdns = false
  udp_preference_limit = 1
[realms]
  $realm = {
    kdc = $listen:$port
  }
[domain_realm]
  $host = $realm
  $client = $realm
CONF
  cat >"$DIR/kdc.conf" <<CONF
[kdcdefaults]
  kdc_listen = $listen:$port
  kdc_tcp_listen = $listen:$port
[realms]
  $realm = {
    database_name = $DIR/principal
    key_stash_file = $DIR/stash
    acl_file = $DIR/kadm5.acl
    max_life = 10h
    supported_enctypes = aes256-cts-hmac-sha1-96:normal aes128-cts-hmac-sha1-96:normal
  }
[logging]
  kdc = FILE:$DIR/kdc.log
CONF
  : >"$DIR/kadm5.acl"
  export KRB5_CONFIG=$DIR/krb5.conf KRB5_KDC_PROFILE=$DIR/kdc.conf
  kdb5_util create -s -r "$realm" -P "test-master-$$" >"$DIR/setup.log" 2>&1 ||
    die "kdb5_util create failed: $(cat "$DIR/setup.log")"
  local kadmin=(kadmin.local -r "$realm" -q)
  for p in "nfs/$host" daemon nosuchuser "host/$client"; do
    "${kadmin[@]}" "addprinc -randkey $p" >>"$DIR/setup.log" 2>&1
  done
  "${kadmin[@]}" "ktadd -k $DIR/nfs.keytab nfs/$host" >>"$DIR/setup.log" 2>&1
  for p in daemon nosuchuser "host/$client"; do
    "${kadmin[@]}" "ktadd -k $DIR/client.keytab $p" >>"$DIR/setup.log" 2>&1
  done
  [ -s "$DIR/nfs.keytab" ] && [ -s "$DIR/client.keytab" ] ||
    die "keytabs not written: $(cat "$DIR/setup.log")"
  krb5kdc -n -r "$realm" -P "$DIR/krb5kdc.pid.tmp" >"$DIR/krb5kdc.out" 2>&1 &
  echo $! >"$DIR/krb5kdc.pid"
  rm -f "$DIR/krb5kdc.pid.tmp"
  # Ready when it answers: an AS exchange for a key we hold.
  local until=$((SECONDS + 30))
  until KRB5CCNAME=FILE:$DIR/probe.ccache kinit -k -t "$DIR/client.keytab" daemon \
      >/dev/null 2>&1; do
    kill -0 "$(cat "$DIR/krb5kdc.pid")" 2>/dev/null ||
      die "krb5kdc exited: $(cat "$DIR/krb5kdc.out" "$DIR/kdc.log" 2>/dev/null)"
    [ $SECONDS -lt $until ] || die "KDC did not answer within 30 s"
    sleep 0.2
  done
  rm -f "$DIR/probe.ccache"
  printf 'KRB5_CONFIG=%s\nKRB5_REALM=%s\nKRB5_HOST=%s\n' "$DIR/krb5.conf" "$realm" "$host" \
    >"$DIR/env"
  echo "$DIR/krb5.conf"
}

stop() {
  [ -d "$DIR" ] || return 0
  if [ -f "$DIR/krb5kdc.pid" ]; then
    local pid
    pid=$(cat "$DIR/krb5kdc.pid")
    if kill -TERM "$pid" 2>/dev/null; then
      local until=$((SECONDS + 15))
      while kill -0 "$pid" 2>/dev/null; do
        [ $SECONDS -lt $until ] || { kill -KILL "$pid" 2>/dev/null || true; break; }
        sleep 0.1
      done
    fi
  fi
  rm -rf "$DIR"
}

[ $# -ge 2 ] || die "usage: krb5-kdc.sh start|stop DIR [options]"
cmd=$1 DIR=$2
shift 2
case $cmd in
  start) start "$@" ;;
  stop) stop ;;
  *) die "unknown command $cmd" ;;
esac

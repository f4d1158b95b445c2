# Runs in the lab guest before the mount, after guest_tls_setup.sh, with
# NFS3D (the binary), CERTS and GUEST_DIR (a directory outside /tmp) set:
# starts nfs3d in the guest, whose kernel has kTLS (tls.ko), serving
# $GUEST_DIR/export with xprtsec=tls to the guest itself (127.0.0.1), its log
# in $GUEST_DIR/nfs3d.log, its pid in $GUEST_DIR/nfs3d.pid.
mkdir -p "$GUEST_DIR/export" "$GUEST_DIR/state"
# The guest's root is an overlay, which has no file handles: a tmpfs has.
mount -t tmpfs -o size=192m tmpfs "$GUEST_DIR/export"
echo "$GUEST_DIR/export 127.0.0.1(rw,insecure,no_root_squash,xprtsec=tls)" > "$GUEST_DIR/exports"
cat > "$GUEST_DIR/nfs3d.conf" <<CONF
[nfsd]
listen = 127.0.0.1
port = 2049
mountd_port = 20048
threads = 4
portmapper = off
[paths]
state_dir = $GUEST_DIR/state
exports = $GUEST_DIR/exports
[log]
level = debug
[tcp]
# The test is of READ replies spliced through kTLS: "on" (the default) is
# spelled out, since the client is this machine's loopback, which "auto" copies.
sendfile = on
[tls]
certificate = $CERTS/server.pem
key = $CERTS/server.key
CONF
"$NFS3D" --config "$GUEST_DIR/nfs3d.conf" --foreground 2> "$GUEST_DIR/nfs3d.log" &
echo $! > "$GUEST_DIR/nfs3d.pid"  # guest_tls_ktls.sh hands it over
for _ in $(seq 1 100); do
  grep -q "listening on tcp 127.0.0.1 port 20048" "$GUEST_DIR/nfs3d.log" && exit 0
  sleep 0.1
done
cat "$GUEST_DIR/nfs3d.log"
exit 1

# Runs in the lab guest before the mount (mount-run --pre-mount) after a
# line that sets TLSHD (the tlshd binary), CERTS (a directory outside /tmp
# with ca.pem, client.pem, client.key) and MODE: loads the kernel's TLS and
# starts tlshd, which does the handshakes the kernel asks for (with the
# client certificate for mtls).
modprobe tls
{
  printf '[debug]\nloglevel=1\ntls=0\nnl=0\n[authenticate]\n[authenticate.client]\n'
  printf 'x509.truststore=%s\n' "$CERTS/ca.pem"
  if [ "$MODE" = mtls ]; then
    printf 'x509.certificate=%s\nx509.private_key=%s\n' "$CERTS/client.pem" "$CERTS/client.key"
  fi
} > /etc/tlshd.conf
"$TLSHD" -c /etc/tlshd.conf -s > /var/log/tlshd.log 2>&1 &
sleep 1
kill -0 $! || { cat /var/log/tlshd.log; exit 1; }

#!/bin/bash
# Makes the certificates of an RPC-with-TLS test in DIR (made if missing),
# with openssl: a CA (ca.pem), the server's certificate for localhost,
# 127.0.0.1 and any further subjectAltName entries given (e.g. IP:10.200.0.1)
# (server.pem, server.key; server2.pem, server2.key: a renewed one), a client certificate from the CA
# (client.pem, client.key) and one from another CA of the same name, which a
# client presents (its issuer is one the server asks for) and which does not
# verify (rogue.pem, rogue.key).
# P-256 keys: quick to make. Test keys only, made fresh for every run.
set -euo pipefail
dir=$1
shift
sans="DNS:localhost,IP:127.0.0.1"
for san in "$@"; do sans="$sans,$san"; done
mkdir -p "$dir"
cd "$dir"
days=2
newkey=(-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes)
openssl req -x509 "${newkey[@]}" -keyout ca.key -out ca.pem -days $days \
  -subj /CN=nfs3d-test-ca -addext basicConstraints=critical,CA:TRUE 2>/dev/null
openssl req -x509 "${newkey[@]}" -keyout rogue-ca.key -out rogue-ca.pem -days $days \
  -subj /CN=nfs3d-test-ca -addext basicConstraints=critical,CA:TRUE 2>/dev/null
# issue NAME CA SUBJECT EXTENSIONS
issue() {
  openssl req -new "${newkey[@]}" -keyout "$1.key" -out "$1.csr" -subj "$3" 2>/dev/null
  printf '%s\n' "$4" > "$1.ext"
  openssl x509 -req -in "$1.csr" -CA "$2.pem" -CAkey "$2.key" -CAcreateserial -days $days \
    -out "$1.pem" -extfile "$1.ext" 2>/dev/null
  rm -f "$1.csr" "$1.ext"
}
issue server ca /CN=localhost \
  "subjectAltName=$sans
extendedKeyUsage=serverAuth"
issue server2 ca /CN=localhost \
  "subjectAltName=$sans
extendedKeyUsage=serverAuth"
issue client ca /CN=nfs-client "extendedKeyUsage=clientAuth"
issue rogue rogue-ca /CN=rogue-client "extendedKeyUsage=clientAuth"
chmod 600 ./*.key

# --pre-mount script for sec=krb5* mounts in the lab guest (see
# ../shared/lab/README.md): the test realm's krb5.conf and the client's
# machine keytab from $KRB5_LAB, host names, the GSS kernel module, rpc_pipefs
# and rpc.gssd.
cp "$KRB5_LAB/krb5.conf" /etc/krb5.conf
cp "$KRB5_LAB/client.keytab" /etc/krb5.keytab
chmod 600 /etc/krb5.keytab
echo "10.200.0.1 server.nfs3d.test" >> /etc/hosts
echo "10.200.0.2 client.nfs3d.test" >> /etc/hosts
hostname client.nfs3d.test
modprobe rpcsec_gss_krb5
mkdir -p /run/rpc_pipefs
mountpoint -q /run/rpc_pipefs || mount -t rpc_pipefs sunrpc /run/rpc_pipefs
rpc.gssd
sleep 1

#!/usr/bin/env python3
"""Fetches nfs3d's /metrics over TCP and checks it with the Prometheus
project's own text-format parser (python3-prometheus-client): it must parse,
and nfs3d_rpc_calls_total / nfs3d_rpc_duration_seconds must list every
NFSv3 and MOUNT procedure.

usage: check_metrics.py URL
"""
import sys
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

NFS3_PROCS = ["NULL", "GETATTR", "SETATTR", "LOOKUP", "ACCESS", "READLINK", "READ",
              "WRITE", "CREATE", "MKDIR", "SYMLINK", "MKNOD", "REMOVE", "RMDIR", "RENAME",
              "LINK", "READDIR", "READDIRPLUS", "FSSTAT", "FSINFO", "PATHCONF", "COMMIT"]
MOUNT_PROCS = ["NULL", "MNT", "DUMP", "UMNT", "UMNTALL", "EXPORT"]


def main():
    url = sys.argv[1]
    with urllib.request.urlopen(url, timeout=10) as response:
        content_type = response.headers.get("Content-Type", "")
        text = response.read().decode("utf-8")
    assert content_type.startswith("text/plain"), content_type
    families = {f.name: f for f in text_string_to_metric_families(text)}
    # The parser strips _total from counter family names.
    calls = families["nfs3d_rpc_calls"]
    assert calls.type == "counter", calls.type
    seen = {(s.labels["program"], s.labels["proc"], s.labels["proto"]): s.value
            for s in calls.samples}
    for proto in ("tcp", "udp"):
        for proc in NFS3_PROCS:
            assert ("nfs", proc, proto) in seen, ("nfs", proc, proto)
        for proc in MOUNT_PROCS:
            assert ("mount", proc, proto) in seen, ("mount", proc, proto)
    assert seen[("nfs", "NULL", "tcp")] >= 3, seen[("nfs", "NULL", "tcp")]
    duration = families["nfs3d_rpc_duration_seconds"]
    assert duration.type == "histogram", duration.type
    procs = {s.labels["proc"] for s in duration.samples if s.labels.get("program") == "nfs"}
    assert procs == set(NFS3_PROCS), procs
    for name in ("nfs3d_read_size_bytes", "nfs3d_write_size_bytes"):
        assert families[name].type == "histogram", name
    for name in ("nfs3d_drc_hits", "nfs3d_fsyncs", "nfs3d_sync_requests", "nfs3d_rpc_errors",
                 "nfs3d_rpc_rejected", "nfs3d_rpc_retransmits", "nfs3d_config_reloads"):
        assert families[name].type == "counter", name
    for name in ("nfs3d_tcp_connections", "nfs3d_exports", "nfs3d_build_info",
                 "nfs3d_nlm_in_grace"):
        assert families[name].type == "gauge", name
    print("ok: %d families, %d call series" % (len(families), len(calls.samples)))


if __name__ == "__main__":
    main()

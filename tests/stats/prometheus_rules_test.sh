#!/bin/bash
# The shipped Prometheus rules against the real thing: `promtool check rules`
# on docs/prometheus/*.yml, then Debian's prometheus server (its own config,
# data directory and loopback port; not the system service) scrapes nfs3d
# while three clients load it, evaluates the rules, and the test queries
# every rule's expression through the HTTP API: each must evaluate, and the
# per-head and per-client recordings must hold the loading clients. Every
# query of docs/grafana/nfs3d.json must evaluate too.
# usage: prometheus_rules_test.sh NFS3D RULES_DIR
nfs3d=$1
rules=$2
. "$(dirname "$0")/origin_env.sh"
prom_pid=
cleanup() {
  [ -n "$prom_pid" ] && kill "$prom_pid" 2>/dev/null && wait "$prom_pid" 2>/dev/null
  cleanup_env
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v prometheus >/dev/null && command -v promtool >/dev/null ||
  fail "prometheus/promtool not installed (apt-get install prometheus)"

promtool check rules "$rules"/*.yml || fail "promtool check rules"

start_nfs3d
load 127.0.0.2 "$dir/alpha" 1000 120
load 127.0.0.3 "$dir/beta" 2000 120 40

prom_port=$(free_port)
mkdir -p "$dir/prom"
# The recording group evaluates every 15 s as shipped; here every second.
for f in "$rules"/*.yml; do
  sed 's/^    interval: 15s$/    interval: 1s/' "$f" >"$dir/prom/$(basename "$f")"
done
cat >"$dir/prom/prometheus.yml" <<CONF
global:
  scrape_interval: 1s
  evaluation_interval: 1s
rule_files:
  - $dir/prom/nfs3d-*.yml
scrape_configs:
  - job_name: nfs3d
    static_configs:
      - targets: ["127.0.0.1:$metrics"]
CONF
prometheus --config.file="$dir/prom/prometheus.yml" --storage.tsdb.path="$dir/prom/data" \
  --web.listen-address="127.0.0.1:$prom_port" >"$dir/prom/log" 2>&1 &
prom_pid=$!

api="http://127.0.0.1:$prom_port/api/v1"
query() {  # EXPR -> the JSON answer
  curl -sfG "$api/query" --data-urlencode "query=$1"
}
# Wait for the recordings of both clients (rates need two scrapes, the
# recording rules a few evaluations).
for _ in $(seq 90); do
  n=$(query 'client:nfs3d_calls:rate5m{client=~"127.0.0.[23]"} > 0' |
      $py -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))' 2>/dev/null || echo 0)
  [ "$n" = 2 ] && break
  sleep 1
done
[ "$n" = 2 ] || { tail -20 "$dir/prom/log" >&2; fail "client recordings never appeared"; }

# Every rule's expression, as Prometheus itself loaded it.
curl -sf "$api/rules" >"$dir/rules.json" || fail "GET /api/v1/rules"
$py - "$api" "$dir/rules.json" "$rules/../grafana/nfs3d.json" <<'PY' || fail "rule expressions"
import json, sys, urllib.parse, urllib.request
api, path = sys.argv[1], sys.argv[2]
groups = json.load(open(path))["data"]["groups"]
def query(expr):
    url = api + "/query?" + urllib.parse.urlencode({"query": expr})
    answer = json.load(urllib.request.urlopen(url))
    assert answer["status"] == "success", (expr, answer)
    return answer["data"]["result"]
count = 0
for g in groups:
    for r in g["rules"]:
        assert r["health"] == "ok", (r["name"], r.get("lastError"))
        result = query(r["query"])
        print("%-45s %3d series  %s" % (r["name"], len(result), r["type"]))
        count += 1
assert count >= 25, count
# Per head and per client, from the recordings.
calls = query("instance:nfs3d_rpc_calls:rate5m")
assert len(calls) == 1 and float(calls[0]["value"][1]) > 1, calls
p99 = query("instance:nfs3d_rpc_duration_seconds:p99_5m")
assert len(p99) == 1 and float(p99[0]["value"][1]) > 0, p99
clients = {s["metric"]["client"]: float(s["value"][1]) for s in query("client:nfs3d_calls:rate5m")}
assert clients["127.0.0.2"] > clients["127.0.0.3"] > 0, clients
share = query('client:nfs3d_calls:share5m{client="127.0.0.2"}')
assert 0.5 < float(share[0]["value"][1]) <= 1, share
errors = query('client:nfs3d_errors:rate5m{client="127.0.0.2"}')
assert float(errors[0]["value"][1]) > 0, errors
exports = {s["metric"]["export"] for s in query("export:nfs3d_calls:rate5m")}
assert any(e.endswith("/alpha") for e in exports) and any(e.endswith("/beta") for e in exports), exports
users = {s["metric"]["user"] for s in query("user:nfs3d_calls:rate5m")}
assert {"1000", "2000"} <= users, users
# Every query of the Grafana dashboard evaluates (variables set to this
# job and every instance and client) and the per-client panels show data.
dashboard = json.load(open(sys.argv[3]))
panels = 0
for panel in dashboard["panels"]:
    for target in panel.get("targets", []):
        expr = (target["expr"].replace("$job", "nfs3d").replace("$instance", ".*")
                .replace("$client", ".*"))
        result = query(expr)
        if panel["title"].startswith("Calls per second per client"):
            assert {s["metric"]["client"] for s in result} >= {"127.0.0.2", "127.0.0.3"}, result
        panels += 1
assert panels >= 20, panels
print("dashboard: %d queries evaluated" % panels)
# No alert fires for this healthy load.
firing = [a for a in json.load(urllib.request.urlopen(api + "/alerts"))["data"]["alerts"]
          if a["state"] == "firing"]
assert not firing, firing
print("rules: %d evaluated; clients %s" % (count, clients))
PY
# A reload that fails (a broken exports line) must fire NFS3dReloadFailed.
echo "$dir/alpha 127.0.0.1(no_such_option)" >>"$dir/exports"
kill -HUP "$pid"
firing=0
for _ in $(seq 60); do
  firing=$(query 'ALERTS{alertname="NFS3dReloadFailed",alertstate="firing"}' |
           $py -c 'import json,sys; print(len(json.load(sys.stdin)["data"]["result"]))' 2>/dev/null || echo 0)
  [ "$firing" = 1 ] && break
  sleep 1
done
[ "$firing" = 1 ] || { grep -i reload "$dir/log" >&2; fail "NFS3dReloadFailed did not fire"; }
echo "NFS3dReloadFailed fired after a failed reload"
echo PASS

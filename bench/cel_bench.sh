#!/bin/sh
# cel_bench.sh - the C CEL (build/cel-eval --bench) against cel-go as kube-scheduler v1.37.2
# uses it (build/k8s/cel-oracle --bench: k8s.io/dynamic-resource-allocation/cel, compiled
# once, DeviceMatches per device) on the same typical selectors and 100,000 devices
# (docs/benchmarks.md, "CEL selectors"). Prints per selector the compile time and the time
# per evaluation of both (wall and process CPU, medians of RUNS runs over all devices), the
# ratios, and checks that both matched the same number of devices.
#
# Usage: sh bench/cel_bench.sh [BUILD] (needs `make` and `make k8s`); RUNS=N (default 5),
# DEVICES=N (default 100000). Without BUILD/cel-eval it prints the Go side alone.
set -eu
B=${1:-build}
RUNS=${RUNS:-5}
N=${DEVICES:-100000}
K8S=${K8S:-build/k8s}
cd "$(dirname "$0")/.."
ORACLE=$K8S/cel-oracle
CEVAL=$B/cel-eval
[ -x "$ORACLE" ] || { echo "cel_bench: $ORACLE missing (make k8s)" >&2; exit 1; }
DIR=${TMPDIR:-/tmp}/cel-bench-$N
if [ ! -f "$DIR/devices.json" ] || [ "$ORACLE" -nt "$DIR/devices.json" ]; then
    "$ORACLE" --bench-gen "$DIR" --bench-devices "$N"
fi
T=$(mktemp)
trap 'rm -f "$T" "$T.go" "$T.c"' EXIT
echo "cel_bench: $N devices, $RUNS runs, load average $(cut -d' ' -f1-3 /proc/loadavg)"
"$ORACLE" --bench --selectors "$DIR/selectors.jsonl" --devices "$DIR/devices.json" --runs "$RUNS" >"$T.go"
if [ -x "$CEVAL" ]; then
    "$CEVAL" --bench --selectors "$DIR/selectors.jsonl" --devices "$DIR/devices.json" --runs "$RUNS" >"$T.c"
else
    echo "cel_bench: $CEVAL not built: the Go side alone"
    : >"$T.c"
fi
python3 - "$T.go" "$T.c" <<'PY'
import json, math, sys
def load(p):
    out = {}
    for l in open(p):
        if l.strip():
            r = json.loads(l)
            out[r["id"]] = r
    return out
go, c = load(sys.argv[1]), load(sys.argv[2])
hdr = "%-14s %12s %12s %11s %11s %9s %11s %11s %9s  %s" % (
    "selector", "go compile", "C compile", "go ns/eval", "C ns/eval", "wall x",
    "go cpu ns", "C cpu ns", "cpu x", "matches")
print(hdr)
ratios, cratios, bad = [], [], 0
for sid, g in go.items():
    x = c.get(sid)
    if x is None:
        print("%-14s %10.1fµs %12s %11.0f %11s %9s %11.0f" % (sid, g["compileNs"] / 1e3, "-", g["evalNs"], "-", "-", g.get("evalCpuNs", 0)))
        continue
    r = g["evalNs"] / x["evalNs"] if x["evalNs"] else float("inf")
    cr = g.get("evalCpuNs", 0) / x["evalCpuNs"] if x.get("evalCpuNs") else float("nan")
    ratios.append(r)
    if not math.isnan(cr):
        cratios.append(cr)
    same = (g["matches"], g["errors"]) == (x["matches"], x["errors"])
    bad += not same
    print("%-14s %10.1fµs %10.1fµs %11.0f %11.1f %8.1fx %11.0f %11.1f %8.1fx  %s" % (
        sid, g["compileNs"] / 1e3, x["compileNs"] / 1e3, g["evalNs"], x["evalNs"], r,
        g.get("evalCpuNs", 0), x.get("evalCpuNs", float("nan")), cr,
        "same" if same else "DIFFER go %d/%d C %d/%d" % (g["matches"], g["errors"], x["matches"], x["errors"])))
if ratios:
    gm = lambda xs: math.exp(sum(map(math.log, xs)) / len(xs))
    print("per evaluation, C faster by: wall min %.1fx, geometric mean %.1fx" % (min(ratios), gm(ratios)), end="")
    if cratios:
        print("; CPU min %.1fx, geometric mean %.1fx" % (min(cratios), gm(cratios)))
    else:
        print()
if bad:
    print("cel_bench: %d selectors matched differently" % bad)
    sys.exit(1)
PY

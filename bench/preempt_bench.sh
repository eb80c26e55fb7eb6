#!/bin/sh
# preempt_bench.sh - the cost of a pod that has to preempt, at 5,000 nodes
# (docs/benchmarks-sched.md#preemption).
#
#   sh bench/preempt_bench.sh [BUILD]      (after `make`; BUILD defaults to build)
#
# Environment: RUNS (default 5) runs, the median is reported; BENCH_OUT (default
# /tmp/gpusched-bench) for the generated cluster and the driver; NODES (5000) and PODS (2000).
# bench/gen_preempt.py fills every node with low-priority pods; each pending pod (priority
# 1000) fits nowhere, so it goes through the failed cycle, DefaultPreemption's dry run over
# the first 10% of the nodes (at least 100) that could take it, the eviction of its victims
# and the retry on its nominated node. The figure is sched_simulate's CPU time divided by the
# pods that were nominated (bench/sched_bench.c; every node evaluated, as simulate does by
# default), then the whole `gpusched simulate -o json` command on the same files.
set -eu
BUILD=${1:-build}
RUNS=${RUNS:-5}
OUT=${BENCH_OUT:-/tmp/gpusched-bench}
NODES=${NODES:-5000}
PODS=${PODS:-2000}
SRC=$(cd "$(dirname "$0")/.." && pwd)
DIR="$OUT/preempt-$NODES-$PODS"
mkdir -p "$OUT"

cc -O2 -g -std=c11 -D_GNU_SOURCE -I"$SRC/src" -o "$OUT/sched_bench" "$SRC/bench/sched_bench.c" \
    "$BUILD/libgpulabel.a" -lcurl -ljansson -lyaml -lpthread -ldl -lm
[ -f "$DIR/pending.json" ] ||
    python3 "$SRC/bench/gen_preempt.py" --nodes "$NODES" --pods "$PODS" --seed 1 "$DIR"

i=0
: > "$OUT/preempt-runs.jsonl"
while [ $i -lt "$RUNS" ]; do
    "$OUT/sched_bench" "$DIR/nodes.json" "$DIR/bound.json" "$DIR/pdbs.json" \
        "$DIR/pending.json" >> "$OUT/preempt-runs.jsonl"
    i=$((i + 1))
done
python3 - "$OUT/preempt-runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[1])]
r = runs[0]
per = [x["simulate_cpu_s"] * 1e6 / max(x["preemptions"], 1) for x in runs]
print("preemption: nodes=%d bound=%d pending=%d  nominated=%d victims=%d scheduled=%d  "
      "%.1f us CPU per preempting pod (median of %d: %s)" % (
      r["nodes"], r["bound_pods"], r["pending"], r["preemptions"], r["victims"], r["scheduled"],
      statistics.median(per), len(runs), ", ".join("%.1f" % x for x in per)))
PY
if [ -x "$BUILD/gpusched" ]; then
    /usr/bin/time -f "whole command: wall %e s, user %U s, sys %S s, max RSS %M KiB" \
        "$BUILD/gpusched" simulate -f "$DIR" -o json > /dev/null 2> "$OUT/time.txt" || true
    grep -v 'pods\.\.\.$' "$OUT/time.txt"
fi

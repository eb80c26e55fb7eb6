#!/bin/sh
# affinity_curve.sh - InterPodAffinity's cost per pod against the number of pods in the cluster
# (docs/benchmarks-sched.md, "InterPodAffinity against the pod count").
#
#   sh bench/affinity_curve.sh [BUILD]       (after `make`; BUILD defaults to build)
#
# For each total pod count N of SIZES (default 10000 50000 100000) on 5,000 nodes:
# bench/gen_schedperf.py AffinityCurve writes N - MEASURE bound pods and MEASURE pending ones
# (default 2,000), half of them with required anti-affinity and preferred affinity to their
# app; bench/sched_bench.c times sched_simulate over the pending pods in CPU seconds
# (CLOCK_PROCESS_CPUTIME_ID, loading excluded) and the median of RUNS (default 3) runs is
# printed as µs per pod. PCT (default 100) is percentageOfNodesToScore (0: kube-scheduler's
# adaptive default). LIB=path/to/libgpulabel.a times another build of the library (the
# "before" figures: a build of the commit before the change). CURVE=SpreadCurve runs the same
# sizes with PodTopologySpread constraints instead of pod affinity terms.
set -eu
BUILD=${1:-build}
RUNS=${RUNS:-3}
PCT=${PCT:-100}
MEASURE=${MEASURE:-2000}
SIZES=${SIZES:-10000 50000 100000}
CURVE=${CURVE:-AffinityCurve}
OUT=${BENCH_OUT:-/tmp/gpusched-bench}
SRC=$(cd "$(dirname "$0")/.." && pwd)
LIB=${LIB:-$BUILD/libgpulabel.a}
mkdir -p "$OUT"
DRV=$OUT/sched_bench-curve-$$
trap 'rm -f "$DRV" "$OUT/curve-runs-$$.jsonl"' EXIT

cc -O2 -g -std=c11 -D_GNU_SOURCE -I"$SRC/src" -o "$DRV" "$SRC/bench/sched_bench.c" "$LIB" \
    -lcurl -ljansson -lyaml -lpthread -ldl -lm

for n in $SIZES; do
    dir=$OUT/$CURVE-$n-$MEASURE
    [ -f "$dir/4-measure.json" ] ||
        python3 "$SRC/bench/gen_schedperf.py" "$CURVE" "$dir" --init $((n - MEASURE)) --measure "$MEASURE"
    : >"$OUT/curve-runs-$$.jsonl"
    i=0
    while [ $i -lt "$RUNS" ]; do
        "$DRV" --percentage-of-nodes-to-score "$PCT" "$dir"/*.json >>"$OUT/curve-runs-$$.jsonl"
        i=$((i + 1))
    done
    python3 - "$n" "$OUT/curve-runs-$$.jsonl" "$CURVE" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[2])]
r = runs[0]
print("%s pods=%6s (bound %6d, pending %d) nodes=%d pct=%d: %8.1f us/pod (median of %d; cpu-s %s) scheduled=%d unschedulable=%d heap=%.1f MiB" % (
    sys.argv[3], sys.argv[1], r["bound_pods"], r["pending"], r["nodes"], r["percentage"],
    statistics.median(x["us_per_pod"] for x in runs), len(runs),
    ",".join("%.3f" % x["simulate_cpu_s"] for x in runs), r["scheduled"], r["unschedulable"],
    statistics.median(x["heap_after_simulate_bytes"] for x in runs) / 2**20))
PY
done

#!/bin/sh
# sched_bench.sh - throughput, memory and scaling of the scheduling core (docs/benchmarks-sched.md).
#
#   sh bench/sched_bench.sh [BUILD]       (after `make`; BUILD defaults to build)
#
# Environment: RUNS (default 5) runs per point, the median is reported; BENCH_OUT (default
# /tmp/gpusched-bench) for generated clusters and the driver; QUICK=1 for the 5k x 10k point only.
# Every point times sched_simulate (all nodes evaluated for every pod) in CPU seconds of the
# process (CLOCK_PROCESS_CPUTIME_ID), excluding manifest loading; the last section times the
# whole `gpusched simulate` command.
set -eu
BUILD=${1:-build}
RUNS=${RUNS:-5}
OUT=${BENCH_OUT:-/tmp/gpusched-bench}
SRC=$(cd "$(dirname "$0")/.." && pwd)
mkdir -p "$OUT"

cc -O2 -g -std=c11 -D_GNU_SOURCE -I"$SRC/src" -o "$OUT/sched_bench" "$SRC/bench/sched_bench.c" \
    "$BUILD/libgpulabel.a" -lcurl -ljansson -lyaml -lpthread -ldl -lm

gen() { # nodes pods gpu-fraction dir
    [ -f "$4/pending.json" ] || python3 "$SRC/bench/gen_cluster.py" --nodes "$1" --pods "$2" \
        --seed 1 --gpu-fraction "$3" "$4"
}

point() { # label dir profile
    i=0
    : > "$OUT/runs.jsonl"
    while [ $i -lt "$RUNS" ]; do
        "$OUT/sched_bench" --profile "$3" "$2/nodes.json" "$2/bound.json" "$2/pending.json" >> "$OUT/runs.jsonl"
        i=$((i + 1))
    done
    python3 - "$1" "$OUT/runs.jsonl" <<'PY'
import json, statistics, sys
runs = [json.loads(l) for l in open(sys.argv[2])]
med = lambda k: statistics.median(r[k] for r in runs)
r = runs[0]
print("%-28s nodes=%5d pods=%5d  %8.0f pods/s  %6.1f us/pod  %5.2f ns/node/pod  sched=%d unsched=%d preempt=%d  heap=%.1f MiB  maxrss=%.1f MiB  (median of %d, cpu-s %s)" % (
    sys.argv[1], r["nodes"], r["pending"], med("pods_per_s"), med("us_per_pod"), med("ns_per_node_pod"),
    r["scheduled"], r["unschedulable"], r["preemptions"], med("heap_after_simulate_bytes") / 2**20,
    med("max_rss_kib") / 1024, len(runs), ",".join("%.3f" % x["simulate_cpu_s"] for x in runs)))
PY
}

if [ "${QUICK:-0}" = 1 ]; then
    gen 5000 10000 0.4 "$OUT/c-5000-10000"
    point "default 5k x 10k" "$OUT/c-5000-10000" default
    exit 0
fi

echo "== scaling (default profile)"
for n in 1000 2500 5000; do
    for p in 2000 5000 10000; do
        gen $n $p 0.4 "$OUT/c-$n-$p"
        point "default ${n}x${p}" "$OUT/c-$n-$p" default
    done
done
echo "== profiles and contention (5k x 10k)"
point "gpu profile 5k x 10k" "$OUT/c-5000-10000" gpu
gen 5000 10000 0.05 "$OUT/scarce-5000-10000"
point "scarce GPUs (preemption)" "$OUT/scarce-5000-10000" default

echo "== whole command: gpusched simulate -f DIR -o json (load + simulate + print)"
if [ -x "$BUILD/gpusched" ]; then
    for d in c-5000-10000 scarce-5000-10000; do
        /usr/bin/time -f "$d: wall %e s, user %U s, sys %S s, max RSS %M KiB" \
            "$BUILD/gpusched" simulate -f "$OUT/$d" -o json > /dev/null 2> "$OUT/time.txt" || true
        grep -v '^gpusched: scheduled' "$OUT/time.txt"
    done
fi

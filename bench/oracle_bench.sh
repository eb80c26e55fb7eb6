#!/bin/sh
# kube-scheduler (the oracle, in-process, no API server, pods all at once) against
# `gpusched simulate -o json` on scheduler_perf's SchedulingBasic shape: 5,000 nodes of
# 4 CPU / 32Gi / 110 pods, 1,000 bound pods, 10,000 pending pods of 100m / 500Mi.
# Both at percentageOfNodesToScore 0 (kube-scheduler's adaptive default) and 100.
# Prints one line per run and the medians, of wall-clock time and of CPU time (user + system:
# the fair measure when other work shares the cores); results go to docs/benchmarks.md by hand.
#
# Usage: sh bench/oracle_bench.sh [BUILD_DIR] (needs `make` and `make k8s`); RUNS=N (default 5)
set -e
B=${1:-build}
RUNS=${RUNS:-5}
cd "$(dirname "$0")/.."
ORACLE=$B/k8s/kube-scheduler-oracle
GPUSCHED=$B/gpusched
for bin in "$ORACLE" "$GPUSCHED"; do
    [ -x "$bin" ] || { echo "oracle_bench: $bin missing (make && make k8s)" >&2; exit 1; }
done
IN=${TMPDIR:-/tmp}/oracle-bench-schedbasic
python3 bench/gen_schedbasic.py --nodes 5000 --bound 1000 --pods 10000 "$IN"
PODS=10000
T=$(mktemp)
trap 'rm -f "$T" "$T.k" "$T.g"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }

for pct in 0 100; do
    : >"$T.k"; : >"$T.g"
    for i in $(seq "$RUNS"); do
        # kube-scheduler: its scheduling time (from the scheduler's start to the last bind)
        # and the whole process (decoding, admission, fake API, informer sync, scheduling)
        /usr/bin/time -f "%e %U %S" -o "$T" "$ORACLE" -f "$IN" --all-at-once \
            --percentage-of-nodes-to-score $pct -o json 2>"$T.err" >/dev/null
        sched=$(sed -n 's/.* pods in \([0-9.]*\)s.*/\1/p' "$T.err")
        read -r kwall kuser ksys <"$T"
        kcpu=$(echo "$kuser $ksys" | awk '{print $1 + $2}')
        # gpusched: the whole process, JSON parsing included
        /usr/bin/time -f "%e %U %S" -o "$T" "$GPUSCHED" simulate -f "$IN" -o json \
            --percentage-of-nodes-to-score $pct >/dev/null
        read -r gwall guser gsys <"$T"
        gcpu=$(echo "$guser $gsys" | awk '{print $1 + $2}')
        echo "pct=$pct run=$i kube-scheduler: scheduling ${sched}s, process ${kwall}s (cpu ${kcpu}s); gpusched: process ${gwall}s (cpu ${gcpu}s)"
        echo "$sched $kwall $kcpu" >>"$T.k"
        echo "$gwall $gcpu" >>"$T.g"
    done
    ks=$(cut -d' ' -f1 "$T.k" | median)
    kw=$(cut -d' ' -f2 "$T.k" | median)
    kc=$(cut -d' ' -f3 "$T.k" | median)
    gw=$(cut -d' ' -f1 "$T.g" | median)
    gc=$(cut -d' ' -f2 "$T.g" | median)
    awk -v p=$pct -v n=$PODS -v ks="$ks" -v kw="$kw" -v kc="$kc" -v gw="$gw" -v gc="$gc" 'BEGIN {
        printf "pct=%s medians: kube-scheduler %.0f pods/s scheduling (%.2fs), %.0f pods/s whole process (%.2fs, cpu %.2fs); gpusched %.0f pods/s whole process (%.2fs, cpu %.2fs); ratio %.1fx (vs scheduling), %.1fx (process vs process), %.1fx (cpu vs cpu)\n",
            p, n/ks, ks, n/kw, kw, kc, n/gw, gw, gc, ks/gw, kw/gw, kc/gc }'
done
rm -f "$T.err"

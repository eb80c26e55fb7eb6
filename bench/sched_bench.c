/* sched_bench.c - throughput of the scheduling core on manifest files (bench/sched_bench.sh
 * builds and runs it; not part of `make`). Loads the files with the manifest loader, adds the
 * nodes and bound pods to a cluster, then times sched_simulate over the pending pods (every
 * node evaluated for every pod, unless --percentage-of-nodes-to-score samples them) and
 * prints one JSON line with the figures.
 *
 *   sched_bench [--profile default|gpu] [--seed N] [--percentage-of-nodes-to-score N] FILE... */
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "base/clock.h"
#include "manifest/manifest.h"
#include "sched/sched.h"

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static long heap_bytes(void)
{
    struct mallinfo2 m = mallinfo2();

    return (long)(m.uordblks + m.hblkhd);
}

static long rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = 0;

    while (f && fgets(line, sizeof(line), f))
        if (!strncmp(line, "VmRSS:", 6))
            v = atol(line + 6);
    if (f)
        fclose(f);
    return v;
}

int main(int argc, char **argv)
{
    const struct sched_profile *prof = &sched_profile_default;
    struct sched_profile sampled;
    struct sched_sim_opts opts = {0};
    struct manifest_input in;
    struct err err = {0};
    struct sched_cluster *c;
    const struct kube_pod **pending;
    struct sched_result *res;
    struct rusage ru;
    size_t i, np = 0, sched = 0, unsched = 0, nominated = 0, victims = 0, preempted = 0;
    double t0, t1, t2, c2;
    long rss_input, rss_cluster, heap0, heap_cluster, heap_end;
    char buf[2048];
    int a = 1;

    for (; a < argc && argv[a][0] == '-' && argv[a][1] == '-'; a += 2) {
        if (a + 1 >= argc)
            return 2;
        if (!strcmp(argv[a], "--profile") && !(prof = sched_profile_find(argv[a + 1])))
            return 2;
        if (!strcmp(argv[a], "--seed"))
            opts.seed = strtoull(argv[a + 1], NULL, 10);
        if (!strcmp(argv[a], "--percentage-of-nodes-to-score")) {
            sampled = *prof;
            sampled.percentage_of_nodes_to_score = atoi(argv[a + 1]);
            prof = &sampled;
        }
    }
    manifest_input_init(&in, NULL);
    t0 = mono_now();
    for (; a < argc; a++)
        if (manifest_input_load_file(&in, argv[a], &err)) {
            fprintf(stderr, "sched_bench: %s\n", err_format(&err, buf, sizeof(buf)));
            return 1;
        }
    if (manifest_input_finish(&in, &err)) {
        fprintf(stderr, "sched_bench: %s\n", err_format(&err, buf, sizeof(buf)));
        return 1;
    }
    rss_input = rss_kib();
    t1 = mono_now();
    heap0 = heap_bytes();
    if (!(c = sched_cluster_new()))
        return 1;
    for (i = 0; i < in.nnodes; i++)
        if (sched_cluster_add_node(c, &in.nodes[i], &err))
            return 1;
    pending = malloc((in.npods + 1) * sizeof(*pending));
    for (i = 0; i < in.npods; i++) {
        if (in.pods[i].node_name[0]) {
            if (sched_cluster_add_pod(c, &in.pods[i], &err))
                return 1;
        } else {
            pending[np++] = &in.pods[i];
        }
    }
    rss_cluster = rss_kib();
    heap_cluster = heap_bytes() - heap0;
    res = calloc(np + 1, sizeof(*res));
    t2 = mono_now();
    c2 = cpu_now();
    if (sched_simulate(c, prof, pending, np, &opts, res, &err)) {
        fprintf(stderr, "sched_bench: %s\n", err.msg);
        return 1;
    }
    {
        double t3 = mono_now(), wall = t3 - t2, secs = cpu_now() - c2;
        heap_end = heap_bytes() - heap0;
        for (i = 0; i < np; i++) {
            sched += res[i].outcome == SCHED_SCHEDULED;
            unsched += res[i].outcome == SCHED_UNSCHEDULABLE;
            nominated += res[i].nominated_node != NULL;
            victims += res[i].nvictims;
            preempted += res[i].preempted;
        }
        getrusage(RUSAGE_SELF, &ru);
        printf(
            "{\"nodes\":%zu,\"pending\":%zu,\"profile\":\"%s\",\"percentage\":%d,\"scheduled\":%zu,"
            "\"unschedulable\":%zu,\"preemptions\":%zu,\"victims\":%zu,\"preempted_pending\":%zu,"
            "\"load_s\":%.3f,\"simulate_wall_s\":%.4f,\"simulate_cpu_s\":%.4f,\"pods_per_s\":%.0f,"
            "\"us_per_pod\":%.2f,"
            "\"ns_per_node_pod\":%.2f,\"rss_input_kib\":%ld,\"rss_cluster_kib\":%ld,"
            "\"max_rss_kib\":%ld,\"heap_cluster_bytes\":%ld,\"heap_after_simulate_bytes\":%ld,"
            "\"bound_pods\":%zu}\n",
            in.nnodes, np, prof->name, (int)prof->percentage_of_nodes_to_score, sched, unsched,
            nominated, victims, preempted, t1 - t0, wall, secs, (double)np / secs,
            secs * 1e6 / (double)np,
            secs * 1e9 / ((double)np * (double)(in.nnodes ? in.nnodes : 1)), rss_input, rss_cluster,
            ru.ru_maxrss, heap_cluster, heap_end, in.npods - np);
    }
    for (i = 0; i < np; i++)
        sched_result_release(&res[i]);
    free(res);
    free(pending);
    sched_cluster_free(c);
    manifest_input_release(&in);
    return 0;
}

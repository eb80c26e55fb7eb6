/* state-int.h - the state serve's threads share, and the locking rule around it (not for other
 * parts of the program).
 *
 * Threads: one informer per resource (nodes, pods, PodDisruptionBudgets, Namespaces, Services,
 * ReplicationControllers, ReplicaSets, StatefulSets) applies watch events straight into the
 * cluster state and the queue under one mutex (mu); the main thread is the scheduling loop
 * (loop.c) under the same mutex; the binder's thread sends binds, events, status patches and
 * deletions and reports back under it (writes.c); a signal thread turns SIGTERM/SIGINT into
 * a graceful stop (signals.c); the leader elector and the probe server have a thread each.
 * The loop holds mu for each cycle: the others take it with serve_lock/serve_unlock. */
#ifndef SERVE_STATE_INT_H
#define SERVE_STATE_INT_H

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/arena.h"
#include "base/keymap.h"
#include "kube/client.h"
#include "kube/informer.h"
#include "sched/config.h"
#include "sched/sched.h"
#include "serve/binder-int.h"
#include "base/httpd.h"
#include "serve/leader-int.h"
#include "serve/metrics.h"
#include "serve/queue.h"
#include "serve/recorder.h"

struct tls_server;
struct serve_auth;

/* The flags of gpusched serve. */
struct serve_opts {
    const char *scheduler_name;
    const char *profile;
    const char *kubeconfig;
    const char *context;
    double qps;
    int burst;
    bool leader_elect;
    int64_t lease_duration_ms, renew_deadline_ms, retry_period_ms;
    const char *lease_name, *lease_namespace;
    const char *metrics_addr;
    int verbosity;
    bool log_json; /* --logging-format json */
    int bind_workers;
    int64_t max_unschedulable_ms;
    int64_t initial_backoff_ms, max_backoff_ms;
    int percentage_of_nodes_to_score;              /* 0..100, 0 adaptive */
    const struct sched_kube_version *kube_version; /* --kube-version; NULL: the default */
    const char *config;                            /* --config FILE: a KubeSchedulerConfiguration */
    uint64_t memory_limit; /* --memory-limit, else the cgroup's; 0: none known */
    /* the secure port, as kube-scheduler's (docs/security.md) */
    int secure_port;           /* --secure-port; 0: none */
    const char *bind_address;  /* --bind-address */
    const char *tls_cert_file; /* --tls-cert-file; NULL: self-signed */
    const char *tls_key_file;  /* --tls-private-key-file */
    const char *always_allow;  /* --authorization-always-allow-paths */
};

/* A pod assumed on a node: its bind is in flight, or done and not yet seen by the informer. */
struct serve_assumed {
    char *uid; /* points into key's allocation */
    char key[];
};

/* A node's fingerprint (serve_node_fingerprint), keyed by name. */
struct serve_node_fp {
    uint64_t fp;
    char name[];
};

/* The objects whose selectors PodTopologySpread's system defaults read, one informer each. */
enum serve_src { SERVE_SRC_SERVICE, SERVE_SRC_RC, SERVE_SRC_RS, SERVE_SRC_STS, SERVE_SRC_COUNT };
#define SERVE_SRC_ALL ((1u << SERVE_SRC_COUNT) - 1)

/* The secondary scheduler's state: one per process, shared by its threads. */
struct serve {
    struct serve_opts o;
    const struct sched_profile *profile; /* &profile_buf */
    struct sched_profile profile_buf;    /* the built-in profile with the node sampling flag */
    /* --config: its profiles (profile is then the first); a pending pod is ours when some
     * profile has its schedulerName, and is scheduled with that profile */
    struct sched_config cfg;
    char instance[320];
    struct kube_client *client;
    struct kube_client *event_client;  /* events only: a rate limit of their own */
    struct kube_client *leader_client; /* the Lease only: the same, as kube-scheduler */
    struct serve_recorder *recorder;   /* client-go's Event series */
    pthread_mutex_t refs_mu;
    struct keymap podrefs; /* assigned pods: key -> uid, resourceVersion (serve_podref_*) */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    atomic_int waiters; /* threads blocked in serve_lock: the loop steps aside for them */
    /* under mu */
    struct sched_cluster *cluster;
    struct serve_queue *queue;
    struct keymap node_fps; /* name -> struct serve_node_fp */
    struct keymap assumed;  /* key -> struct serve_assumed: binds in flight or unconfirmed */
    struct sched_rng rng;
    bool nodes_synced, pods_synced, pdbs_synced, nss_synced;
    unsigned sources_synced; /* a bit per enum serve_src: SERVE_SRC_ALL when all synced */
    bool stopping, lost_leadership;
    bool yielding; /* the loop waits in serve_yield for the other threads' turn */
    /* threads */
    volatile sig_atomic_t informer_stop;
    struct kube_informer *nodes_inf, *pods_inf, *pdbs_inf, *ns_inf;
    struct kube_informer *src_inf[SERVE_SRC_COUNT]; /* Services and controllers */
    /* the pod informer thread's: a watch event's pod is decoded here and the arena rewound
     * after it, so its first block serves every event (no malloc/free per event) */
    struct arena pod_arena;
    struct arena_mark pod_arena_empty;
    struct serve_binder *binder;
    struct serve_leader *leader;
    struct httpd *httpd; /* --metrics-addr: plain HTTP, no authorization */
    struct httpd *https; /* --secure-port */
    struct tls_server *tls;
    struct serve_auth *auth;
    struct serve_metrics metrics;
    pthread_t signal_thread;
    bool signals_started;
};

/* serve_lock takes mu for a thread other than the scheduling loop. The loop holds mu for
 * each cycle and takes it straight back, and mutexes are not fair: so the others announce
 * themselves and the loop yields between two pods until they have had their turn.
 * serve_unlock releases mu, waking the loop only when it stepped aside (work for the loop is
 * announced with a broadcast on cv). */
void serve_lock(struct serve *s);
void serve_unlock(struct serve *s);

/* serve_wait waits on cv, mu held, for at most ms. serve_yield (the loop, mu held) waits
 * while other threads are blocked in serve_lock, at most 20 x 5 ms. */
void serve_wait(struct serve *s, int64_t ms);
void serve_yield(struct serve *s);

/* serve_update_gauges copies the queue's and the cluster's sizes into the metrics (mu held). */
void serve_update_gauges(struct serve *s);

/* serve_cache_pod_count: the pods counted on the cluster's nodes, bound and assumed (mu
 * held; one pass over the nodes, for /metrics). */
uint64_t serve_cache_pod_count(struct serve *s);

/* The uid and resourceVersion of every assigned pod, from the pod informer (under refs_mu, not
 * mu): what a Preempted event's regarding names. _set records or replaces key's, _delete
 * forgets it, _get copies it out ("" when unknown), _free releases them all. */
void serve_podref_set(struct serve *s, const char *key, const char *uid, const char *rv);
void serve_podref_delete(struct serve *s, const char *key);
void serve_podref_get(struct serve *s, const char *key, char *uid, size_t usize, char *rv,
                      size_t rsize);
void serve_podrefs_release(struct serve *s);

/* serve_unassume drops key from the assumed set (mu held). */
void serve_unassume(struct serve *s, const char *key);

/* serve_synced: every informer has delivered a complete list (mu held): scheduling starts
 * and /readyz says ready, as kube-scheduler waits for its informers' handlers. */
bool serve_synced(const struct serve *s);

/* serve_leading: no election, or this replica holds the lease. */
bool serve_leading(struct serve *s);

#endif

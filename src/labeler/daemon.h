/* daemon.h - keeping the Node's labels right through the API server (the reconcile step
 * itself is labeler/sync.h).
 *
 * labeler_sync_once reconciles once: it reads the Node, sets the desired labels, removes the
 * stale labels gpulabel itself wrote earlier (and only those), and sends no write when the
 * node already carries the right labels. labeler_daemon_run re-detects every
 * cfg->sleep_interval_ms until SIGTERM/SIGINT. */
#ifndef LABELER_DAEMON_H
#define LABELER_DAEMON_H

#include "base/err.h"
#include "labeler/config.h"
#include "labeler/labels.h"

/* labeler_sync_once returns 0 when the node carries desired (written or already right): one
 * GET, and one merge PATCH only when something differs (re-read and retried up to 3 times on
 * 409). Needs cfg->node_name; the client comes from cfg->kubeconfig (NULL: $KUBECONFIG,
 * in-cluster, ~/.kube/config). On failure err's message is complete and names the node, e.g.
 * `cannot patch node "gpu-1": forbidden: ... (check the ClusterRole allows get,patch on
 * nodes)`, with err->http_status set for API errors. Nothing runs past deadline (mono_now()
 * seconds; 0: the requests' own timeouts only). */
int labeler_sync_once(const struct labeler_config *cfg, const struct labeler_labels *desired,
                      double deadline, struct err *err);

/* labeler_daemon_run runs the loop (docs/node-sync.md), logging to stderr, and returns the
 * process exit status: 0 after SIGTERM/SIGINT, 2 without a node name (unless cfg->no_sync),
 * 1 when the API client cannot be set up. API and NVML failures never end it. */
int labeler_daemon_run(const struct labeler_config *cfg);

#endif

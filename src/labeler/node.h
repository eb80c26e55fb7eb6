/* node.h - gpulabel's own Node as the daemon talks to it beside its labels: the API client
 * every part of the daemon opens the same way, and Events posted on the Node. */
#ifndef LABELER_NODE_H
#define LABELER_NODE_H

#include <stddef.h>

#include "base/err.h"
#include "kube/client.h"
#include "labeler/config.h"

#define LABELER_REQUEST_TIMEOUT_MS 10000 /* per request; a hung server must not stall a loop */
#define LABELER_USER_AGENT "gpulabel/0.1 (linux)"

/* labeler_client_open makes a client from cfg->kubeconfig (NULL: $KUBECONFIG, in-cluster,
 * ~/.kube/config) with gpulabel's user agent, request timeout and body cap (--memory-limit).
 * The caller frees it. labeler_client_open_until also bounds every request by deadline
 * (monotonic seconds; 0: none). */
int labeler_client_open_until(const struct labeler_config *cfg, double deadline,
                              struct kube_client **out, struct err *err);
int labeler_client_open(const struct labeler_config *cfg, struct kube_client **out,
                        struct err *err);

/* labeler_node_event_client makes labeler_node_event post through c (borrowed, thread-safe;
 * NULL: a client of its own each time). Call it before any thread posts. */
void labeler_node_event_client(struct kube_client *c);

/* labeler_node_label reads the value of the Node's label key into out[0..size) ("" when the
 * node has no such label). */
int labeler_node_label(struct kube_client *c, const char *node, const char *key, char *out,
                       size_t size, struct err *err);

/* labeler_node_event posts an Event of type ("Warning", "Normal") and reason on the Node, as
 * the kubelet posts node events (namespace default, involvedObject.uid = the node's name), so
 * that `kubectl describe node` shows it; with its own client, from any thread. A failure is
 * logged; nothing is posted with --no-sync or without a node name. */
void labeler_node_event(const struct labeler_config *cfg, const char *type, const char *reason,
                        const char *msg);

#endif

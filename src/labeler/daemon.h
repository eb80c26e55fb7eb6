/* daemon.h - keeping the Node's labels right through the API server.
 *
 * labeler_sync_once reconciles once: it reads the Node, sets the desired labels, removes the
 * stale labels gpulabel itself wrote earlier (and only those), and sends no write when the
 * node already carries the right labels. labeler_daemon_run re-detects every
 * cfg->sleep_interval_ms until SIGTERM/SIGINT. */
#ifndef LABELER_DAEMON_H
#define LABELER_DAEMON_H

#include "kube/err.h"
#include "labeler/config.h"
#include "labeler/labels.h"

/* labeler_sync_once returns 0 when the node carries desired (written or already right). */
int labeler_sync_once(const struct labeler_config *cfg, const struct labeler_labels *desired,
                      struct kube_err *err);

/* labeler_daemon_run runs the loop; returns the process exit status. */
int labeler_daemon_run(const struct labeler_config *cfg);

#endif

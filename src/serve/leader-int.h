/* leader-int.h - leader election with a coordination.k8s.io/v1 Lease, as client-go does it.
 *
 * A thread tries to acquire the lease every retry period (with jitter) and, once leading,
 * renews it every retry period. Another holder's lease counts as valid until
 * leaseDurationSeconds after this replica last saw the record change (local clock, never the
 * holder's renewTime). A leader that cannot renew within the renew deadline loses the lease.
 * Writes are PUTs of the whole object with the resourceVersion read, so a race gives 409.
 * On release the holder is cleared and the duration set to 1 s so a standby takes over at
 * once. Constraint checked at start: lease duration > renew deadline > 1.2 x retry period. */
#ifndef SERVE_LEADER_INT_H
#define SERVE_LEADER_INT_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "base/err.h"
#include "kube/client.h"

struct serve_leader;

struct serve_leader_opts {
    const char *namespace_;    /* "kube-system" */
    const char *name;          /* "gpusched" */
    const char *identity;      /* "<hostname>_<random>" */
    int64_t lease_duration_ms; /* 15000 */
    int64_t renew_deadline_ms; /* 10000 */
    int64_t retry_period_ms;   /* 2000 */
    /* Called on the election thread when leadership starts (true) or is lost (false). */
    void (*changed)(void *ud, bool leading);
    /* Diagnostics (level 0 error, 2 info, 4 debug); the library never prints. */
    void (*log)(void *ud, int level, const char *msg);
    void *ud;
};

/* serve_leader_check validates the three durations; -EINVAL with err naming the flag. */
int serve_leader_check(const struct serve_leader_opts *o, struct err *err);

/* serve_leader_start starts the election thread. c is borrowed and must outlive l. */
int serve_leader_start(struct kube_client *c, const struct serve_leader_opts *o,
                       struct serve_leader **out, struct err *err);

/* serve_leader_is_leader: this replica holds the lease and renewed it within the renew
 * deadline. Safe from any thread. */
bool serve_leader_is_leader(struct serve_leader *l);

/* serve_leader_stop ends the thread and, when leading, releases the lease; then frees l.
 * NULL is fine. */
void serve_leader_stop(struct serve_leader *l);

/* serve_leader_identity builds "<hostname>_<16 random hex digits>" into buf. */
const char *serve_leader_identity(char *buf, size_t size);

#endif

/* daemon.c - placeholder until node sync lands. */
#include "labeler/daemon.h"

#include <errno.h>

int labeler_sync_once(const struct labeler_config *cfg, const struct labeler_labels *desired,
                      struct kube_err *err)
{
    (void)cfg;
    (void)desired;
    return kube_err_set(err, -ENOSYS, "node sync is not built yet");
}

int labeler_daemon_run(const struct labeler_config *cfg)
{
    (void)cfg;
    return 1;
}

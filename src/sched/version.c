/* version.c - the --kube-version table (see version.h). Each row was checked against
 * kube-scheduler's source of that minor version (pkg/scheduler/framework/plugins/...); the
 * oracle in tests/k8s/ runs v1.37.2, the last row. */
#include "sched/version.h"

#include <string.h>

static const struct sched_kube_version versions[] = {
    {"1.32", SCHED_TAINT_WORDING_KEY_VALUE, false, false},
    {"1.33", SCHED_TAINT_WORDING_KEY_VALUE, false, false},
    {"1.34", SCHED_TAINT_WORDING_KEY_VALUE, true, true},
    {"1.35", SCHED_TAINT_WORDING_GENERIC, true, true},
    {"1.36", SCHED_TAINT_WORDING_GENERIC, true, true},
    {"1.37", SCHED_TAINT_WORDING_GENERIC, true, true},
};

const struct sched_kube_version *sched_kube_version_find(const char *name)
{
    size_t i, n;

    if (!name)
        name = SCHED_KUBE_VERSION_DEFAULT;
    if (*name == 'v')
        name++;
    for (i = 0; i < sizeof(versions) / sizeof(versions[0]); i++) {
        n = strlen(versions[i].name);
        if (!strncmp(name, versions[i].name, n) && (!name[n] || name[n] == '.'))
            return &versions[i];
    }
    return NULL;
}

void sched_profile_set_version(struct sched_profile *p, const struct sched_kube_version *v)
{
    p->taint_wording = v->taint;
    p->dra_off = !v->dra_postfilter_text;
}

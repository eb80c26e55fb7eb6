/* fuzz_schedconfig.c - libFuzzer target for the KubeSchedulerConfiguration parser
 * (sched_config_parse, sched/config.c: `--config` of simulate, explain and serve).
 *
 * The input is one configuration file. A success must give profiles the scheduler can run
 * (each named, each found by its name, weights and counts inside their ranges); a refusal must
 * say what and where (the file's name) and leave nothing allocated. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "sched/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char name[] = "fuzz-scheduler.conf";
    struct sched_config cfg;
    struct err e;
    size_t i;

    err_clear(&e);
    if (sched_config_parse((const char *)data, size, name, NULL, &cfg, &e) == 0) {
        if (!cfg.nprofiles || !cfg.profiles || !cfg.doc)
            __builtin_trap();
        for (i = 0; i < cfg.nprofiles; i++) {
            const struct sched_profile *p = &cfg.profiles[i];
            if (!p->name || !p->name[0] || sched_config_find(&cfg, p->name) != p ||
                p->percentage_of_nodes_to_score < 0 || p->percentage_of_nodes_to_score > 100 ||
                p->nfit_resources > SCHED_MAX_FIT_RESOURCES || p->nshape > SCHED_MAX_SHAPE_POINTS ||
                p->w_taint < 0 || p->w_affinity < 0 || p->w_fit < 0 || p->w_balanced < 0 ||
                p->w_spread < 0 || p->w_interpod < 0 || p->w_image < 0 || p->gpu_weight < 0)
                __builtin_trap();
        }
        sched_config_release(&cfg);
        /* a released configuration is empty and may be released again */
        if (cfg.profiles || cfg.nprofiles || cfg.doc)
            __builtin_trap();
        sched_config_release(&cfg);
    } else {
        if (!e.msg[0] || strcmp(e.file, name) || cfg.profiles || cfg.nprofiles || cfg.doc)
            __builtin_trap();
    }
    return 0;
}

/* impls.c - the implementations of the environment's functions, found by overload id (or by
 * name for singletons): the libraries' tables, searched when a program is planned and when a
 * call dispatches at run time. */
#include <string.h>

#include "cel/eval.h"
#include "cel/lib.h"

/* ---- implementations by overload id ---- */

const struct cel_impl *cel_impl_find(const char *id)
{
    const struct cel_impl *(*tables[])(size_t *) = {cel_std_impls,    cel_ext_impls,
                                                    cel_k8s_impls,    cel_k8snet_impls,
                                                    cel_k8sfmt_impls, cel_time_impls};

    for (size_t t = 0; t < sizeof(tables) / sizeof(tables[0]); t++) {
        size_t n;
        const struct cel_impl *v = tables[t](&n);
        for (size_t i = 0; i < n; i++)
            if (!strcmp(v[i].id, id))
                return &v[i];
    }
    return NULL;
}

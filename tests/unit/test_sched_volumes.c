/* test_sched_volumes.c - VolumeBinding's matching rules (component-helpers' FindMatchingVolume),
 * VolumeZone's value sets and the bindings sched_volumebinding_reserve keeps (src/sched/volumebinding.c).
 * The end-to-end answers are checked against kube-scheduler in tests/scenarios/volume-*. */
#include "test.h"

#include <stdio.h>
#include <string.h>

#include "sched/plugins-int.h"
#include "sched_tb.h"

static const char *const nodes3[] = {
    "n1: cpu=4000 mem=8192 pods=110 label:kubernetes.io/hostname=n1 label:topology.kubernetes.io/zone=z1",
    "n2: cpu=4000 mem=8192 pods=110 label:kubernetes.io/hostname=n2 label:topology.kubernetes.io/zone=z2",
    "n3: cpu=4000 mem=8192 pods=110 label:kubernetes.io/hostname=n3 label:topology.kubernetes.io/zone=z3",
    NULL};

static const struct kube_storage_class local_wffc = {
    "local", "kubernetes.io/no-provisioner", true, NULL, 0, NULL, 0};

/* host_affinity pins a volume to one node by kubernetes.io/hostname */
static void host_affinity(struct arena *a, struct kube_pv *pv, const char *node)
{
    struct kube_node_selector_term *t = arena_alloc(a, sizeof(*t));
    struct kube_requirement *r = arena_alloc(a, sizeof(*r));
    const char **v = arena_alloc(a, sizeof(*v));

    v[0] = node;
    r->key = "kubernetes.io/hostname";
    r->op = KUBE_OP_IN;
    r->values = v;
    r->nvalues = 1;
    t->exprs = r;
    t->nexprs = 1;
    pv->has_affinity = true;
    pv->affinity.terms = t;
    pv->affinity.nterms = 1;
}

static struct kube_pv local_pv(struct arena *a, const char *name, const char *node, int64_t gib)
{
    struct kube_pv pv;

    memset(&pv, 0, sizeof(pv));
    pv.name = name;
    pv.storage_class = "local";
    pv.claim_uid = "";
    pv.available = true;
    pv.access = KUBE_ACCESS_RWO;
    pv.capacity = gib << 30;
    if (node)
        host_affinity(a, &pv, node);
    return pv;
}

static struct kube_pvc claim(const char *name, int64_t gib)
{
    struct kube_pvc c;

    memset(&c, 0, sizeof(c));
    c.namespace_ = "default";
    c.name = name;
    c.storage_class = "local";
    c.volume_name = "";
    c.access = KUBE_ACCESS_RWO;
    c.request = gib << 30;
    return c;
}

static struct kube_pod *claim_pod(struct arena *a, const char *spec, const char *claim_name)
{
    struct kube_pod *p = tb_pod(a, spec);
    const char **c = arena_alloc(a, sizeof(*c));

    c[0] = claim_name;
    p->claims = c;
    p->nclaims = 1;
    return p;
}

static void check_answer(struct sched_cluster *c, const struct kube_pod *p, const char *want)
{
    const char *got = tb_schedule(c, NULL, p);

    if (strcmp(got, want))
        test_fail(__FILE__, __LINE__, "pod %s: got \"%s\", want \"%s\"", p->name, got, want);
}

/* the smallest volume that fits is bound, and stays bound for the next pods */
static void smallest_volume_bound_and_kept(void)
{
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes3, NULL);
    struct kube_pv pvs[3] = {local_pv(&a, "big-n1", "n1", 100), local_pv(&a, "fit-n2", "n2", 10),
                             local_pv(&a, "tiny-n3", "n3", 1)};
    struct kube_pvc c1 = claim("c1", 5), c2 = claim("c2", 5);
    struct kube_pod *p1 = claim_pod(&a, "name=default/p1 cpu=100", "c1");
    struct kube_pod *p2 = claim_pod(&a, "name=default/p2 cpu=100", "c2");
    struct err err;
    size_t i;

    err_clear(&err);
    CHECK(!sched_cluster_set_storage_class(c, &local_wffc, &err));
    for (i = 0; i < 3; i++)
        CHECK(!sched_cluster_set_pv(c, &pvs[i], &err));
    CHECK(!sched_cluster_set_pvc(c, &c1, &err));
    CHECK(!sched_cluster_set_pvc(c, &c2, &err));
    /* n1 (util 5%: 95) beats n2 (50%: 50); n3's volume is too small */
    check_answer(c, p1, "node:n1");
    CHECK(!sched_cluster_assume_pod(c, p1, "n1", &err));
    CHECK(!sched_volumebinding_reserve(c, p1, "n1", &err));
    /* big-n1 is taken by c1 now: c2 can only have fit-n2 */
    check_answer(c, p2, "node:n2");
    /* a second pod of c1 follows its bound volume to n1 */
    p2->claims[0] = "c1";
    check_answer(c, p2, "node:n1");
    sched_cluster_free(c);
    arena_release(&a);
}

/* access modes, volume mode, the claim's selector, a volume of another class */
static void matching_rules(void)
{
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes3, NULL);
    struct kube_pv rox = local_pv(&a, "rox-n1", "n1", 10),
                   block = local_pv(&a, "block-n2", "n2", 10),
                   other = local_pv(&a, "other-n3", "n3", 10);
    struct kube_pvc cl = claim("c", 5);
    struct kube_pod *p = claim_pod(&a, "name=default/p", "c");
    struct err err;

    rox.access = KUBE_ACCESS_ROX;
    block.block = true;
    other.storage_class = "fast";
    err_clear(&err);
    CHECK(!sched_cluster_set_storage_class(c, &local_wffc, &err));
    CHECK(!sched_cluster_set_pv(c, &rox, &err));
    CHECK(!sched_cluster_set_pv(c, &block, &err));
    CHECK(!sched_cluster_set_pv(c, &other, &err));
    CHECK(!sched_cluster_set_pvc(c, &cl, &err));
    check_answer(c, p,
                 "0/3 nodes are available: 3 node(s) didn't find available persistent volumes "
                 "to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for "
                 "scheduling.");
    /* the same claim in Block mode gets block-n2 */
    cl.block = true;
    CHECK(!sched_cluster_set_pvc(c, &cl, &err));
    check_answer(c, p, "node:n2");
    sched_cluster_free(c);
    arena_release(&a);
}

/* a volume pre-bound to the claim (claimRef) is the only one tried: where its node affinity
 * fails, no other volume is considered */
static void prebound_volume_only(void)
{
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes3, NULL);
    struct kube_pv pre = local_pv(&a, "pre-n3", "n3", 10),
                   free_n1 = local_pv(&a, "free-n1", "n1", 10);
    struct kube_pvc cl = claim("c", 5);
    struct kube_pod *p = claim_pod(&a, "name=default/p", "c");
    struct err err;

    pre.claim_ns = "default";
    pre.claim_name = "c";
    pre.available = false; /* (a pre-bound volume need not be Available) */
    err_clear(&err);
    CHECK(!sched_cluster_set_storage_class(c, &local_wffc, &err));
    CHECK(!sched_cluster_set_pv(c, &free_n1, &err));
    CHECK(!sched_cluster_set_pv(c, &pre, &err));
    CHECK(!sched_cluster_set_pvc(c, &cl, &err));
    check_answer(c, p, "node:n3");
    sched_cluster_free(c);
    arena_release(&a);
}

/* VolumeZone: the volume's value is a set "z1__z2"; a node without zone labels passes */
static void zone_value_sets(void)
{
    static const char *const nodes[] = {
        "n1: cpu=4000 mem=8192 pods=110 label:topology.kubernetes.io/zone=z3",
        "n2: cpu=4000 mem=8192 pods=110 label:topology.kubernetes.io/zone=z2",
        "n3: cpu=4000 mem=8192 pods=110 label:failure-domain.beta.kubernetes.io/zone=z3", NULL};
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes, NULL);
    struct kube_pv pv = local_pv(&a, "zoned", NULL, 10);
    struct kube_label lab = {"failure-domain.beta.kubernetes.io/zone", "z1__z2"};
    struct kube_pvc cl = claim("c", 5);
    struct kube_pod *p = claim_pod(&a, "name=default/p", "c");
    struct err err;

    pv.labels.v = &lab;
    pv.labels.n = 1;
    pv.claim_ns = "default";
    pv.claim_name = "c";
    cl.volume_name = "zoned";
    cl.bind_completed = true;
    err_clear(&err);
    CHECK(!sched_cluster_set_pv(c, &pv, &err));
    CHECK(!sched_cluster_set_pvc(c, &cl, &err));
    /* n1: the beta key is looked up under its GA name too (z3, not in the set); n3: z3 */
    check_answer(c, p, "node:n2");
    sched_cluster_free(c);
    arena_release(&a);
}

/* a claim with a selected node (being provisioned) keeps its pods there */
static void selected_node_pins(void)
{
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes3, NULL);
    static const struct kube_storage_class csi = {
        "local", "disk.csi.example.com", true, NULL, 0, NULL, 0};
    struct kube_pvc cl = claim("c", 5);
    struct kube_pod *p = claim_pod(&a, "name=default/p", "c");
    struct err err;

    cl.selected_node = "n3";
    err_clear(&err);
    CHECK(!sched_cluster_set_storage_class(c, &csi, &err));
    CHECK(!sched_cluster_set_pvc(c, &cl, &err));
    check_answer(c, p, "node:n3");
    sched_cluster_free(c);
    arena_release(&a);
}

static const char *const nodes2[] = {
    "n1: cpu=4000 mem=8192 pods=110 label:kubernetes.io/hostname=n1",
    "n2: cpu=4000 mem=8192 pods=110 label:kubernetes.io/hostname=n2", NULL};

/* csi_bound: a claim bound to a CSI volume (driver, handle) or, with handle NULL, to an
 * in-tree GCE PD named pd with the zone label zones (NULL: none) */
static void csi_bound(struct arena *a, struct sched_cluster *c, const char *name,
                      const char *driver, const char *handle, const char *pd, const char *zones)
{
    struct kube_pv pv;
    struct kube_pvc cl = claim(name, 1);
    char *pvname = arena_alloc(a, strlen(name) + 4);
    struct err err;

    snprintf(pvname, strlen(name) + 4, "pv-%s", name);
    memset(&pv, 0, sizeof(pv));
    pv.name = pvname;
    pv.storage_class = "";
    pv.claim_uid = "";
    pv.claim_ns = "default";
    pv.claim_name = name;
    pv.capacity = 1 << 30;
    pv.access = KUBE_ACCESS_RWO;
    if (handle) {
        pv.csi_driver = driver;
        pv.csi_handle = handle;
    } else {
        pv.intree.plugin = KUBE_INTREE_GCE_PD;
        pv.intree.id = pd;
        if (zones) {
            struct kube_label *l = arena_alloc(a, sizeof(*l));
            l->key = "topology.kubernetes.io/zone";
            l->value = zones;
            pv.labels.v = l;
            pv.labels.n = 1;
        }
    }
    cl.storage_class = "";
    cl.volume_name = pvname;
    cl.bind_completed = true;
    err_clear(&err);
    CHECK(!sched_cluster_set_pv(c, &pv, &err));
    CHECK(!sched_cluster_set_pvc(c, &cl, &err));
}

static void limit_on(struct sched_cluster *c, const char *node, const char *driver, int32_t n)
{
    static struct kube_csi_node_driver d[4];
    static int nd;
    struct kube_csi_node cn;
    struct err err;

    nd %= 4;
    d[nd].name = driver;
    d[nd].has_count = true;
    d[nd].count = n;
    memset(&cn, 0, sizeof(cn));
    cn.name = node;
    cn.migrated_plugins = "";
    cn.drivers = &d[nd++];
    cn.ndrivers = 1;
    err_clear(&err);
    CHECK(!sched_cluster_set_csi_node(c, &cn, &err));
}

/* NodeVolumeLimits: a volume already on the node is not new; another one is over the limit */
static void limits_count_unique_volumes(void)
{
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes2, NULL);
    struct kube_pod *old = claim_pod(&a, "name=default/old cpu=100", "x");
    struct kube_pod *same = claim_pod(&a, "name=default/same cpu=100", "x");
    struct kube_pod *other = claim_pod(&a, "name=default/other cpu=100", "y");
    struct err err;

    err_clear(&err);
    csi_bound(&a, c, "x", "d.example.com", "h-x", NULL, NULL);
    csi_bound(&a, c, "y", "d.example.com", "h-y", NULL, NULL);
    limit_on(c, "n1", "d.example.com", 1);
    limit_on(c, "n2", "d.example.com", 0);
    CHECK(!sched_cluster_assume_pod(c, old, "n1", &err));
    check_answer(c, same, "node:n1");
    check_answer(c, other,
                 "0/2 nodes are available: 2 node(s) exceed max volume count. preemption: 0/2 "
                 "nodes are available: 2 No preemption victims found for incoming pod.");
    sched_cluster_free(c);
    arena_release(&a);
}

/* GCE PD translation: the handle carries the volume's zone (a regional one its region); a
 * zone set of two regions does not translate, so that volume is not counted */
static void limits_gce_handles(void)
{
    struct arena a = {0};
    struct sched_cluster *c = tb_cluster(&a, nodes2, NULL);
    struct kube_pod *old = claim_pod(&a, "name=default/old cpu=100", "r1");
    struct kube_pod *same = claim_pod(&a, "name=default/same cpu=100", "r2");
    struct kube_pod *bad = claim_pod(&a, "name=default/bad cpu=100", "bad");
    struct kube_pod *plain = claim_pod(&a, "name=default/plain cpu=100", "plain");
    struct err err;

    err_clear(&err);
    csi_bound(&a, c, "r1", NULL, NULL, "d1", "us-central1-a__us-central1-b");
    csi_bound(&a, c, "r2", NULL, NULL, "d1", "us-central1-b__us-central1-a");
    csi_bound(&a, c, "bad", NULL, NULL, "d1", "us-central1-a__europe-west1-b");
    csi_bound(&a, c, "plain", NULL, NULL, "d1", NULL);
    limit_on(c, "n1", "pd.csi.storage.gke.io", 1);
    limit_on(c, "n2", "pd.csi.storage.gke.io", 0);
    CHECK(!sched_cluster_assume_pod(c, old, "n1", &err));
    /* projects/UNSPECIFIED/regions/us-central1/disks/d1 both times */
    check_answer(c, same, "node:n1");
    check_answer(c, bad, "node:n2");
    /* zones/UNSPECIFIED: another volume */
    CHECK(!strncmp(tb_schedule(c, NULL, plain), "0/2 nodes are available: 2 node(s) exceed", 40));
    sched_cluster_free(c);
    arena_release(&a);
}

static const struct test_case cases[] = {
    {"smallest volume bound and kept", smallest_volume_bound_and_kept},
    {"matching rules", matching_rules},
    {"pre-bound volume only", prebound_volume_only},
    {"zone value sets", zone_value_sets},
    {"selected node pins", selected_node_pins},
    {"limits count unique volumes", limits_count_unique_volumes},
    {"limits GCE PD handles", limits_gce_handles},
};

TEST_SUITE(sched_volumes, cases)

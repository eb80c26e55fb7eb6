/* test_dra_alloc.c - the structured allocator (src/sched/dra_alloc*.c): named cases for what
 * kube-scheduler's allocator does (first fit in pool/slice/device order, backtracking for a
 * constraint and for shared counters, firstAvailable, All, taints, admin access, shares of a
 * device, invalid and incomplete pools, the CEL error messages), then small random problems
 * checked against a brute-force reference: every choice of subrequests and every combination
 * of devices in the allocator's order, each complete assignment validated as a whole, the first
 * valid one is the answer. (The Go allocator itself judges it in tests/k8s: dra-alloc-diff.) */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sched/dra_alloc.h"
#include "test.h"

/* ---- a tiny selector language for the tests: "true", "a==N", "s==X", "err" (a runtime error
 * on devices without attribute "a"), "compile" (a compile error) ---- */

static const struct dra_attr *attr(const struct dra_device *d, const char *name)
{
    size_t i;

    for (i = 0; i < d->nattrs; i++)
        if (!strcmp(d->attrs[i].name, name))
            return &d->attrs[i];
    return NULL;
}

static int t_eval(void *ctx, const struct dra_selector *sel, const struct dra_device *d,
                  const char *driver, char *msg, size_t size)
{
    const struct dra_attr *a;

    (void)ctx;
    (void)driver;
    if (!strcmp(sel->expr, "true"))
        return 1;
    if (!strncmp(sel->expr, "a==", 3)) {
        a = attr(d, "a");
        return a && a->i == atoll(sel->expr + 3);
    }
    if (!strncmp(sel->expr, "s==", 3)) {
        a = attr(d, "s");
        return a && !strcmp(a->s, sel->expr + 3);
    }
    if (!strcmp(sel->expr, "err")) {
        if (attr(d, "a"))
            return 1;
        snprintf(msg, size, "no such key: a");
        return -1;
    }
    return 0;
}

static int t_nodesel(void *ctx, const void *selector, char *msg, size_t size)
{
    (void)ctx;
    (void)msg;
    (void)size;
    return !strcmp((const char *)selector, "match");
}

static const struct dra_ops t_ops = {t_eval, t_nodesel, NULL};

/* ---- building blocks ---- */

#define MAXDEV 16
struct tdev {
    struct dra_device d;
    struct dra_attr attrs[3];
    struct dra_consumption cons[1];
    struct dra_counter ccount[2];
    struct dra_taint taint;
    struct dra_capacity cap;
    struct dra_cap_policy pol;
};

struct tslice {
    struct dra_slice s;
    struct tdev devs[MAXDEV];
    struct dra_device flat[MAXDEV];
    struct dra_counter_set set;
    struct dra_counter setc[2];
};

static void dev_init(struct tdev *t, const char *name, uint32_t id, int a, const char *s)
{
    memset(t, 0, sizeof(*t));
    t->d.name = name;
    t->d.id = id;
    t->attrs[0] = (struct dra_attr){.name = "a", .type = DRA_ATTR_INT, .i = a};
    t->attrs[1] = (struct dra_attr){.name = "s", .type = DRA_ATTR_STRING, .s = s};
    t->d.attrs = t->attrs;
    t->d.nattrs = 2;
}

/* ts's slice: named name, of driver "d", in pool (of count slices, generation 1), for node
 * n1; no devices yet (slice_finish) */
static void slice_init(struct tslice *ts, const char *name, const char *pool, int64_t count)
{
    ts->s = (struct dra_slice){.name = name,
                               .driver = "d",
                               .pool = pool,
                               .generation = 1,
                               .count = count,
                               .sel = {.node_name = "n1"}};
}

static void slice_finish(struct tslice *ts, size_t n)
{
    size_t i;

    for (i = 0; i < n; i++)
        ts->flat[i] = ts->devs[i].d;
    ts->s.devices = ts->flat;
    ts->s.ndevices = n;
}

struct run {
    int status;
    struct dra_claim_result res[4];
    char msg[1024];
};

/* the release allocate() answers as (0: v1.37's defaults) */
static int release_minor;

static void allocate(const struct dra_slice *slices, size_t nslices, size_t nids,
                     const struct dra_state *state, const struct dra_claim *claims, size_t nclaims,
                     struct run *out)
{
    struct dra_inventory inv = {slices, nslices, nids};
    struct dra_features f =
        release_minor ? dra_features_for(release_minor) : dra_features_default();
    struct dra_pools pools;
    struct dra_scratch *s = dra_scratch_new();
    char msg[512] = "";

    memset(out, 0, sizeof(*out));
    CHECK(s != NULL);
    if (dra_pools_gather(&inv, NULL, 0, "n1", &f, &t_ops, &pools, msg, sizeof(msg))) {
        out->status = -1;
        snprintf(out->msg, sizeof(out->msg), "gather: %s", msg);
        dra_scratch_free(s);
        return;
    }
    out->status = dra_allocate(&f, "n1", &pools, state, claims, nclaims, &t_ops, s, out->res,
                               out->msg, sizeof(out->msg));
    dra_pools_free(&pools);
    dra_scratch_free(s);
}

static const char *devices_of(const struct dra_claim_result *r, char *buf, size_t size)
{
    size_t i, n = 0;

    buf[0] = '\0';
    for (i = 0; i < r->n && n < size; i++)
        n += (size_t)snprintf(buf + n, size - n, "%s%s%s%s=%s", i ? " " : "",
                              r->results[i].parent_request ? r->results[i].parent_request : "",
                              r->results[i].parent_request ? "/" : "", r->results[i].request,
                              r->results[i].device->name);
    return buf;
}

static struct dra_request req(const char *name, const struct dra_class *cls, int64_t count)
{
    struct dra_request r;

    memset(&r, 0, sizeof(r));
    r.name = name;
    r.class_name = cls ? cls->name : "missing";
    r.class = cls;
    r.mode = DRA_MODE_EXACT;
    r.count = count;
    return r;
}

static const struct dra_class any_class = {"any", NULL, 0};

/* ---- named cases ---- */

/* two pools on the node, slices out of name order: the first devices in pool, slice and
 * device order; a second request continues with the next free ones */
static void first_fit_order(void)
{
    static struct tslice sl[3];
    struct dra_slice flat[3];
    struct dra_request r1 = req("one", &any_class, 2), r2 = req("two", &any_class, 1);
    struct dra_claim_request crs[2] = {{"one", false, &r1, 1}, {"two", false, &r2, 1}};
    struct dra_claim claim = {"default", "c", crs, 2, NULL, 0};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    memset(sl, 0, sizeof(sl));
    /* pool "b" (sorted after "a"), pool "a" in two slices named out of order */
    slice_init(&sl[0], "z", "b", 1);
    dev_init(&sl[0].devs[0], "b0", 0, 0, "x");
    slice_finish(&sl[0], 1);
    slice_init(&sl[1], "a-2", "a", 2);
    dev_init(&sl[1].devs[0], "a2", 1, 0, "x");
    slice_finish(&sl[1], 1);
    slice_init(&sl[2], "a-1", "a", 2);
    dev_init(&sl[2].devs[0], "a1", 2, 0, "x");
    slice_finish(&sl[2], 1);
    flat[0] = sl[0].s;
    flat[1] = sl[1].s;
    flat[2] = sl[2].s;
    allocate(flat, 3, 3, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "one=a1 one=a2 two=b0");
    CHECK(out.res[0].node_local);
    /* b0 taken by someone else: the claim no longer fits */
    {
        uint8_t allocated[3] = {1, 0, 0};

        st.allocated = allocated;
        allocate(flat, 3, 3, &st, &claim, 1, &out);
        CHECK_INT_EQ(out.status, DRA_NOT_ALLOCATED);
    }
}

/* matchAttribute: the first device's value binds the rest, so the search backs up */
static void match_attribute_backtracks(void)
{
    static struct tslice sl;
    struct dra_request r = req("gpu", &any_class, 2);
    struct dra_claim_request cr = {"gpu", false, &r, 1};
    struct dra_constraint c = {DRA_MATCH, "d/s", NULL, 0};
    struct dra_claim claim = {"default", "c", &cr, 1, &c, 1};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    dev_init(&sl.devs[0], "g0", 0, 0, "x");
    dev_init(&sl.devs[1], "g1", 1, 0, "y");
    dev_init(&sl.devs[2], "g2", 2, 0, "z");
    dev_init(&sl.devs[3], "g3", 3, 0, "y");
    slice_finish(&sl, 4);
    allocate(&sl.s, 1, 4, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "gpu=g1 gpu=g3");
    /* distinct on a (all 0): two devices cannot both join */
    c.kind = DRA_DISTINCT;
    c.attr = "d/a";
    allocate(&sl.s, 1, 4, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_NOT_ALLOCATED);
}

/* firstAvailable: the first subrequest that can be satisfied, named request/subrequest */
static void first_available(void)
{
    static struct tslice sl;
    struct dra_request subs[2] = {req("big", &any_class, 3), req("small", &any_class, 1)};
    struct dra_claim_request cr = {"gpu", true, subs, 2};
    struct dra_claim claim = {"default", "c", &cr, 1, NULL, 0};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    sl.s.sel = (struct dra_node_sel){.all_nodes = true};
    dev_init(&sl.devs[0], "g0", 0, 0, "x");
    dev_init(&sl.devs[1], "g1", 1, 0, "x");
    slice_finish(&sl, 2);
    allocate(&sl.s, 1, 2, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "gpu/small=g0");
    CHECK_INT_EQ(out.res[0].selected[0], 1);
    CHECK(!out.res[0].node_local && out.res[0].nsels == 0);
}

/* All: every matching device; none matching is no allocation; an incomplete pool an error */
static void all_mode(void)
{
    static struct tslice sl[2];
    struct dra_slice flat[2];
    struct dra_selector a1 = {"a==1", NULL, NULL, NULL};
    struct dra_request r = req("all", &any_class, 0);
    struct dra_claim_request cr = {"all", false, &r, 1};
    struct dra_claim claim = {"ns", "c", &cr, 1, NULL, 0};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    r.mode = DRA_MODE_ALL;
    r.sels = &a1;
    r.nsels = 1;
    memset(sl, 0, sizeof(sl));
    slice_init(&sl[0], "s", "p", 1);
    dev_init(&sl[0].devs[0], "g0", 0, 1, "x");
    dev_init(&sl[0].devs[1], "g1", 1, 0, "x");
    dev_init(&sl[0].devs[2], "g2", 2, 1, "x");
    slice_finish(&sl[0], 3);
    flat[0] = sl[0].s;
    allocate(flat, 1, 3, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "all=g0 all=g2");
    /* one of them in use: All cannot be satisfied */
    {
        uint8_t allocated[3] = {0, 0, 1};

        st.allocated = allocated;
        allocate(flat, 1, 3, &st, &claim, 1, &out);
        CHECK_INT_EQ(out.status, DRA_NOT_ALLOCATED);
        st.allocated = NULL;
    }
    /* a pool of two slices with one missing */
    slice_init(&sl[1], "q", "q", 2);
    dev_init(&sl[1].devs[0], "h0", 3, 1, "x");
    slice_finish(&sl[1], 1);
    flat[1] = sl[1].s;
    allocate(flat, 2, 4, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_FAILED);
    CHECK_STR_EQ(out.msg, "claim ns/c, request all: asks for all devices, but resource pool d/q is "
                          "currently being updated");
}

/* a NoSchedule taint needs a toleration; None does not */
static void taints(void)
{
    static struct tslice sl;
    struct dra_request r = req("gpu", &any_class, 1);
    struct dra_claim_request cr = {"gpu", false, &r, 1};
    struct dra_claim claim = {"default", "c", &cr, 1, NULL, 0};
    struct dra_toleration tol = {"broken", "Exists", NULL, NULL};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    dev_init(&sl.devs[0], "g0", 0, 0, "x");
    sl.devs[0].taint = (struct dra_taint){"broken", "", "NoSchedule"};
    sl.devs[0].d.taints = &sl.devs[0].taint;
    sl.devs[0].d.ntaints = 1;
    dev_init(&sl.devs[1], "g1", 1, 0, "x");
    sl.devs[1].taint = (struct dra_taint){"info", "", "None"};
    sl.devs[1].d.taints = &sl.devs[1].taint;
    sl.devs[1].d.ntaints = 1;
    slice_finish(&sl, 2);
    allocate(&sl.s, 1, 2, &st, &claim, 1, &out);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "gpu=g1");
    r.tols = &tol;
    r.ntols = 1;
    allocate(&sl.s, 1, 2, &st, &claim, 1, &out);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "gpu=g0");
}

/* shared counters: 7 of 8 partitions where the first takes too much memory (scheduler_perf's
 * PartitionableBacktracking) */
static void counters_backtracking(void)
{
    static struct tslice sl[2];
    struct dra_slice flat[2];
    struct dra_request r = req("req-0", &any_class, 7);
    struct dra_claim_request cr = {"req-0", false, &r, 1};
    struct dra_claim claim = {"test", "c", &cr, 1, NULL, 0};
    struct dra_state st = {0};
    struct run out;
    char buf[512];
    static char names[8][16];
    int i;

    memset(sl, 0, sizeof(sl));
    slice_init(&sl[0], "counters", "p", 2);
    sl[0].setc[0] = (struct dra_counter){"mem", (kube_nano)70 * KUBE_NANO_PER_UNIT};
    sl[0].set = (struct dra_counter_set){"mem-set", sl[0].setc, 1};
    sl[0].s.counter_sets = &sl[0].set;
    sl[0].s.ncounter_sets = 1;
    slice_init(&sl[1], "devices", "p", 2);
    for (i = 0; i < 8; i++) {
        struct tdev *t = &sl[1].devs[i];

        snprintf(names[i], sizeof(names[i]), "device-%d", i + 1);
        dev_init(t, names[i], (uint32_t)i, 0, "x");
        t->ccount[0] = (struct dra_counter){"mem", (kube_nano)(i ? 10 : 20) * KUBE_NANO_PER_UNIT};
        t->cons[0] = (struct dra_consumption){"mem-set", t->ccount, 1};
        t->d.consumes = t->cons;
        t->d.nconsumes = 1;
    }
    slice_finish(&sl[1], 8);
    flat[0] = sl[0].s;
    flat[1] = sl[1].s;
    allocate(flat, 2, 8, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)),
                 "req-0=device-2 req-0=device-3 req-0=device-4 req-0=device-5 req-0=device-6 "
                 "req-0=device-7 req-0=device-8");
}

/* a device for several allocations: shares until its capacity is used up */
static void consumable_capacity(void)
{
    static struct tslice sl;
    struct dra_capreq want = {"bw", (kube_nano)4 * KUBE_NANO_PER_UNIT};
    struct dra_request r = req("r", &any_class, 1);
    struct dra_claim_request cr = {"r", false, &r, 1};
    struct dra_claim claims[3] = {
        {"ns", "a", &cr, 1, NULL, 0}, {"ns", "b", &cr, 1, NULL, 0}, {"ns", "c", &cr, 1, NULL, 0}};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    r.has_capacity = true;
    r.caps = &want;
    r.ncaps = 1;
    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    dev_init(&sl.devs[0], "shared", 0, 0, "x");
    sl.devs[0].d.has_allow_multiple = sl.devs[0].d.allow_multiple = true;
    sl.devs[0].cap = (struct dra_capacity){"bw", (kube_nano)10 * KUBE_NANO_PER_UNIT, NULL};
    sl.devs[0].d.caps = &sl.devs[0].cap;
    sl.devs[0].d.ncaps = 1;
    slice_finish(&sl, 1);
    allocate(&sl.s, 1, 1, &st, claims, 2, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[1], buf, sizeof(buf)), "r=shared");
    CHECK(out.res[0].results[0].shared && out.res[0].results[0].nconsumed == 1 &&
          out.res[0].results[0].consumed[0].q == want.q);
    /* a third share of 4 does not fit in 10 */
    allocate(&sl.s, 1, 1, &st, claims, 3, &out);
    CHECK_INT_EQ(out.status, DRA_NOT_ALLOCATED);
}

/* admin access ignores other claims' use of a device */
static void admin_access(void)
{
    static struct tslice sl;
    struct dra_request r = req("r", &any_class, 1);
    struct dra_claim_request cr = {"r", false, &r, 1};
    struct dra_claim claim = {"ns", "a", &cr, 1, NULL, 0};
    uint8_t allocated[1] = {1};
    struct dra_state st = {allocated, NULL, NULL, NULL};
    struct run out;

    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    dev_init(&sl.devs[0], "g0", 0, 0, "x");
    slice_finish(&sl, 1);
    allocate(&sl.s, 1, 1, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_NOT_ALLOCATED);
    r.has_admin_access = r.admin_access = true;
    allocate(&sl.s, 1, 1, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK(out.res[0].results[0].admin_access);
}

/* a duplicate device name makes the pool invalid: a node failure when nothing else fits */
static void invalid_pool(void)
{
    static struct tslice sl[2];
    struct dra_slice flat[2];
    struct dra_request r = req("r", &any_class, 1);
    struct dra_claim_request cr = {"r", false, &r, 1};
    struct dra_claim claim = {"ns", "a", &cr, 1, NULL, 0};
    struct dra_state st = {0};
    struct run out;

    memset(sl, 0, sizeof(sl));
    slice_init(&sl[0], "s1", "p", 2);
    dev_init(&sl[0].devs[0], "g0", 0, 0, "x");
    slice_finish(&sl[0], 1);
    sl[1] = sl[0];
    sl[1].s.name = "s2";
    slice_finish(&sl[1], 1);
    flat[0] = sl[0].s;
    flat[1] = sl[1].s;
    allocate(flat, 2, 1, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_NODE_FAILED);
    CHECK_STR_EQ(out.msg, "invalid resource pools were encountered");
}

/* CEL errors are the scheduler's messages: a runtime error on the first device it reaches, a
 * compile error, a class that does not exist */
static void cel_errors(void)
{
    static struct tslice sl;
    struct dra_selector bad = {"err", NULL, NULL, NULL},
                        nocompile = {"x", NULL, "ERROR: <input>:1:1: oops", NULL};
    struct dra_class cls = {"gpu", &bad, 1};
    struct dra_request r = req("r", &cls, 1);
    struct dra_claim_request cr = {"r", false, &r, 1};
    struct dra_claim claim = {"ns", "a", &cr, 1, NULL, 0};
    struct dra_state st = {0};
    struct run out;

    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    dev_init(&sl.devs[0], "g0", 0, 0, "x");
    sl.devs[0].d.nattrs = 0; /* no attribute a */
    slice_finish(&sl, 1);
    allocate(&sl.s, 1, 1, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_FAILED);
    CHECK_STR_EQ(out.msg, "class gpu: selector #0 on device d/p/g0: CEL runtime error: no such "
                          "key: a. consider using CEL optional chaining (.? followed by "
                          "orValue()) or guarding the check with has() for optional fields");
    r.class = &any_class;
    r.sels = &nocompile;
    r.nsels = 1;
    allocate(&sl.s, 1, 1, &st, &claim, 1, &out);
    CHECK_STR_EQ(out.msg, "claim ns/a: selector #0: CEL compile error: ERROR: <input>:1:1: oops");
    r.class = NULL;
    r.class_name = "nope";
    allocate(&sl.s, 1, 1, &st, &claim, 1, &out);
    CHECK_STR_EQ(out.msg, "claim ns/a, request r: could not retrieve device class nope: "
                          "deviceclass.resource.k8s.io \"nope\" not found");
}

/* --kube-version: what the older releases' defaults turn off, and where 1.36's allocator
 * answered otherwise (checked against k8s.io/dynamic-resource-allocation v0.36.6) */
static void older_releases(void)
{
    struct dra_features f35 = dra_features_for(35), f36 = dra_features_for(36),
                        f37 = dra_features_for(37), d = dra_features_default();
    static struct tslice sl;
    struct dra_selector bad = {"err", NULL, NULL, NULL};
    struct dra_request r = req("gpu", &any_class, 3);
    struct dra_claim_request cr = {"gpu", false, &r, 1};
    struct dra_constraint c = {DRA_DISTINCT, "d/s", NULL, 0};
    struct dra_claim claim = {"ns", "a", &cr, 1, &c, 1};
    struct dra_state st = {0};
    struct run out;
    char buf[256];

    CHECK(!memcmp(&f37, &d, sizeof(d)));
    CHECK(f35.admin_access && f35.prioritized_list && !f35.partitionable && !f35.device_taints &&
          !f35.consumable_capacity && !f35.binding_and_status && !f35.extended_resource &&
          !f35.device_taint_rules);
    CHECK(f36.partitionable && f36.consumable_capacity && f36.extended_resource &&
          !f36.device_taint_rules && !f36.fractional_capacity_range &&
          !f36.cel_error_names_device && f36.distinct_by_request);
    memset(&sl, 0, sizeof(sl));
    slice_init(&sl, "s", "p", 1);
    dev_init(&sl.devs[0], "g0", 0, 0, "x");
    dev_init(&sl.devs[1], "g1", 1, 0, "y");
    dev_init(&sl.devs[2], "g2", 2, 0, "x");
    slice_finish(&sl, 3);
    /* distinctAttribute over one request's three devices: 1.37 sees x twice; 1.36 kept only
     * the request's last value (y) and lets the second x in */
    allocate(&sl.s, 1, 3, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_NOT_ALLOCATED);
    release_minor = 36;
    allocate(&sl.s, 1, 3, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_ALLOCATED);
    CHECK_STR_EQ(devices_of(&out.res[0], buf, sizeof(buf)), "gpu=g0 gpu=g1 gpu=g2");
    /* a CEL runtime error before 1.37: neither the device nor the hint */
    claim.nconstraints = 0;
    r.count = 1;
    r.sels = &bad;
    r.nsels = 1;
    sl.devs[0].d.nattrs = 0;
    slice_finish(&sl, 3);
    allocate(&sl.s, 1, 3, &st, &claim, 1, &out);
    CHECK_INT_EQ(out.status, DRA_FAILED);
    CHECK_STR_EQ(out.msg, "claim ns/a: selector #0: CEL runtime error: no such key: a");
    release_minor = 0;
    allocate(&sl.s, 1, 3, &st, &claim, 1, &out);
    CHECK_STR_EQ(out.msg, "claim ns/a: selector #0 on device d/p/g0: CEL runtime error: no such "
                          "key: a. consider using CEL optional chaining (.? followed by "
                          "orValue()) or guarding the check with has() for optional fields");
}

/* ---- random problems against the brute-force reference ---- */

static uint64_t rng_state;
static uint32_t rnd(uint32_t n)
{
    rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (uint32_t)(rng_state >> 33) % n;
}

struct problem {
    struct tslice sl[3];
    struct dra_slice flat[3];
    size_t nsl, nids;
    char names[48][8];
    struct dra_selector sels[4];
    struct dra_class classes[2];
    struct dra_request reqs[3][3][3];
    struct dra_claim_request crs[3][3];
    struct dra_constraint cons[3];
    struct dra_claim claims[3];
    size_t nclaims;
    uint8_t allocated[48];
    struct dra_toleration tol;
};

static const char *sel_pool[] = {"true", "a==0", "a==1", "s==x"};

static void gen_problem(struct problem *p)
{
    size_t i, j, k;
    uint32_t id = 0;

    memset(p, 0, sizeof(*p));
    for (i = 0; i < 4; i++)
        p->sels[i] = (struct dra_selector){sel_pool[i], NULL, NULL, NULL};
    p->classes[0] = (struct dra_class){"any", NULL, 0};
    p->classes[1] = (struct dra_class){"ones", &p->sels[2], 1};
    p->tol = (struct dra_toleration){"t", "Exists", NULL, NULL};
    p->nsl = 1 + rnd(3);
    for (i = 0; i < p->nsl; i++) {
        struct tslice *ts = &p->sl[i];
        size_t n = 1 + rnd(4);

        ts->s.name = i == 0 ? "s0" : i == 1 ? "s1" : "s2";
        ts->s.driver = "d";
        ts->s.pool = rnd(2) ? "p0" : "p1";
        ts->s.generation = 1;
        ts->s.count = 1;
        ts->s.sel.node_name = "n1";
        if (i > 0 && rnd(4) == 0) { /* a slice with pool p0's counter set, no devices */
            ts->s.pool = "p0";
            ts->setc[0] = (struct dra_counter){"m", (kube_nano)(2 + rnd(3)) * KUBE_NANO_PER_UNIT};
            ts->set = (struct dra_counter_set){"set", ts->setc, 1};
            ts->s.counter_sets = &ts->set;
            ts->s.ncounter_sets = 1;
            n = 0;
        }
        for (j = 0; j < n; j++) {
            struct tdev *t = &ts->devs[j];

            snprintf(p->names[id], sizeof(p->names[id]), "g%u", id);
            dev_init(t, p->names[id], id, (int)rnd(2), rnd(2) ? "x" : "y");
            if (rnd(5) == 0) {
                t->taint = (struct dra_taint){"t", "", rnd(2) ? "NoSchedule" : "None"};
                t->d.taints = &t->taint;
                t->d.ntaints = 1;
            }
            if (!strcmp(ts->s.pool, "p0") && rnd(3) == 0) { /* p0 may lack the set: invalid */
                t->ccount[0] =
                    (struct dra_counter){"m", (kube_nano)(1 + rnd(2)) * KUBE_NANO_PER_UNIT};
                t->cons[0] = (struct dra_consumption){"set", t->ccount, 1};
                t->d.consumes = t->cons;
                t->d.nconsumes = 1;
            }
            p->allocated[id] = rnd(6) == 0;
            id++;
        }
        slice_finish(ts, n);
    }
    /* pools split over several slices need their counts */
    for (i = 0; i < p->nsl; i++) {
        int64_t count = 0;

        for (j = 0; j < p->nsl; j++)
            count += !strcmp(p->sl[i].s.pool, p->sl[j].s.pool);
        p->sl[i].s.count = count;
        p->flat[i] = p->sl[i].s;
    }
    p->nids = id;
    p->nclaims = 1 + rnd(2);
    for (i = 0; i < p->nclaims; i++) {
        size_t nreq = 1 + rnd(2);

        for (j = 0; j < nreq; j++) {
            bool fa = rnd(4) == 0;
            size_t nsub = fa ? 2 : 1;
            static const char *rn[] = {"r0", "r1", "r2"}, *sn[] = {"s0", "s1", "s2"};

            for (k = 0; k < nsub; k++) {
                struct dra_request *r = &p->reqs[i][j][k];

                *r = req(fa ? sn[k] : rn[j], &p->classes[rnd(2)], 1 + rnd(2));
                if (rnd(3) == 0) {
                    r->sels = &p->sels[rnd(4)];
                    r->nsels = 1;
                }
                if (rnd(8) == 0) {
                    r->mode = DRA_MODE_ALL;
                    r->count = 0;
                }
                if (rnd(4) == 0) {
                    r->tols = &p->tol;
                    r->ntols = 1;
                }
                if (!fa && rnd(10) == 0)
                    r->has_admin_access = r->admin_access = true;
            }
            p->crs[i][j] = (struct dra_claim_request){rn[j], fa, p->reqs[i][j], nsub};
        }
        p->claims[i] = (struct dra_claim){"ns", "c", p->crs[i], nreq, NULL, 0};
        if (rnd(3) == 0) {
            p->cons[i] = (struct dra_constraint){rnd(2) ? DRA_MATCH : DRA_DISTINCT,
                                                 rnd(2) ? "d/a" : "d/s", NULL, 0};
            p->claims[i].constraints = &p->cons[i];
            p->claims[i].nconstraints = 1;
        }
    }
}

/* the reference: candidates in the allocator's order, then every assignment */
struct cand {
    const struct dra_device *d;
    const struct dra_slice *s;
    const struct dra_pool *pool;
};

struct ref {
    struct problem *p;
    struct dra_pools *pools;
    struct cand c[64];
    size_t nc;
    /* the assignment being built: per claim, the (request, sub, candidate) list */
    struct {
        size_t r, sub, cand;
    } pick[3][40];
    size_t npick[3];
    int chosen_sub[3][3];
    bool found;
    char out[3][256];
};

static bool ref_selectable(const struct dra_request *r, const struct dra_device *d)
{
    char msg[64];
    size_t i;

    if (r->class)
        for (i = 0; i < r->class->nsels; i++)
            if (t_eval(NULL, &r->class->sels[i], d, "d", msg, sizeof(msg)) != 1)
                return false;
    for (i = 0; i < r->nsels; i++)
        if (t_eval(NULL, &r->sels[i], d, "d", msg, sizeof(msg)) != 1)
            return false;
    return true;
}

static const struct dra_attr *ref_attr(const struct dra_device *d, const char *fq)
{
    return attr(d, strchr(fq, '/') + 1);
}

/* validate the whole assignment, uses in order */
static bool ref_valid(struct ref *x)
{
    struct problem *p = x->p;
    int uses[64] = {0};           /* by candidate: claims using it (bits) */
    kube_nano used[3][2] = {{0}}; /* counters by pool index (sets have one counter) */
    size_t c, i, j;

    for (c = 0; c < p->nclaims; c++) {
        const struct dra_claim *cl = &p->claims[c];

        if (x->npick[c] > DRA_RESULTS_MAX)
            return false;
        for (i = 0; i < x->npick[c]; i++) {
            const struct dra_claim_request *cr = &cl->requests[x->pick[c][i].r];
            const struct dra_request *r = &cr->subs[x->pick[c][i].sub];
            const struct cand *cd = &x->c[x->pick[c][i].cand];
            size_t k;

            if (r->admin_access) {
                if (uses[x->pick[c][i].cand] & (1 << c))
                    return false;
            } else if (p->allocated[cd->d->id] || uses[x->pick[c][i].cand]) {
                return false;
            }
            if (cd->d->nconsumes) {
                size_t pi = (size_t)(cd->pool - x->pools->pools);

                used[pi][0] += cd->d->consumes[0].counters[0].value;
                if (used[pi][0] > cd->pool->sets[0]->counters[0].value -
                                      /* allocated devices' consumption */ 0)
                    return false;
            }
            for (k = 0; k < cd->d->ntaints; k++)
                if (!strcmp(cd->d->taints[k].effect, "NoSchedule") &&
                    !(r->ntols && dra_tolerates(r->tols, &cd->d->taints[k])))
                    return false;
            uses[x->pick[c][i].cand] |= 1 << c;
        }
        for (j = 0; j < cl->nconstraints; j++) {
            const struct dra_constraint *ct = &cl->constraints[j];
            const struct dra_attr *first = NULL;

            for (i = 0; i < x->npick[c]; i++) {
                const struct dra_attr *a = ref_attr(x->c[x->pick[c][i].cand].d, ct->attr);
                size_t k;

                if (!a)
                    return false;
                if (ct->kind == DRA_MATCH) {
                    if (first &&
                        (first->type != a->type ||
                         (a->type == DRA_ATTR_INT ? a->i != first->i : strcmp(a->s, first->s))))
                        return false;
                    first = first ? first : a;
                } else {
                    for (k = 0; k < i; k++) {
                        const struct dra_attr *b = ref_attr(x->c[x->pick[c][k].cand].d, ct->attr);

                        if (a->type == b->type &&
                            (a->type == DRA_ATTR_INT ? a->i == b->i : !strcmp(a->s, b->s)))
                            return false;
                    }
                }
            }
        }
    }
    return true;
}

static void ref_search(struct ref *x, size_t c, size_t r, size_t start, int left);

/* the next request (or claim) after claim c's request r is complete */
static void ref_next(struct ref *x, size_t c, size_t r)
{
    if (r + 1 < x->p->claims[c].nrequests)
        ref_search(x, c, r + 1, 0, -1);
    else if (c + 1 < x->p->nclaims)
        ref_search(x, c + 1, 0, 0, -1);
    else if (ref_valid(x)) {
        size_t k, i;

        x->found = true;
        for (k = 0; k < x->p->nclaims; k++) {
            size_t n = 0;

            x->out[k][0] = '\0';
            for (i = 0; i < x->npick[k]; i++) {
                const struct dra_claim_request *cr = &x->p->claims[k].requests[x->pick[k][i].r];

                n += (size_t)snprintf(
                    x->out[k] + n, sizeof(x->out[k]) - n, "%s%s%s%s=%s", i ? " " : "",
                    cr->first_available ? cr->name : "", cr->first_available ? "/" : "",
                    cr->subs[x->pick[k][i].sub].name, x->c[x->pick[k][i].cand].d->name);
            }
        }
    }
}

/* choose devices for claim c, request r (sub x->chosen_sub): left more devices from
 * candidate start on; left -1 starts the request (tries its subrequests) */
static void ref_search(struct ref *x, size_t c, size_t r, size_t start, int left)
{
    const struct dra_claim_request *cr = &x->p->claims[c].requests[r];
    size_t i;

    if (x->found)
        return;
    if (left < 0) {
        size_t k;

        for (k = 0; k < cr->nsubs && !x->found; k++) {
            const struct dra_request *rq = &cr->subs[k];

            x->chosen_sub[c][r] = (int)k;
            if (rq->mode == DRA_MODE_ALL) {
                size_t before = x->npick[c], n = 0;

                for (i = 0; i < x->nc; i++)
                    if (ref_selectable(rq, x->c[i].d)) {
                        x->pick[c][x->npick[c]].r = r;
                        x->pick[c][x->npick[c]].sub = k;
                        x->pick[c][x->npick[c]].cand = i;
                        x->npick[c]++;
                        n++;
                    }
                if (n)
                    ref_next(x, c, r);
                x->npick[c] = before;
            } else {
                ref_search(x, c, r, 0, (int)rq->count);
            }
        }
        return;
    }
    if (left == 0) {
        ref_next(x, c, r);
        return;
    }
    for (i = start; i < x->nc && !x->found; i++) {
        const struct dra_request *rq = &cr->subs[x->chosen_sub[c][r]];

        if (!ref_selectable(rq, x->c[i].d))
            continue;
        x->pick[c][x->npick[c]].r = r;
        x->pick[c][x->npick[c]].sub = (size_t)x->chosen_sub[c][r];
        x->pick[c][x->npick[c]].cand = i;
        x->npick[c]++;
        ref_search(x, c, r, i + 1, left - 1);
        x->npick[c]--;
    }
}

static void random_against_reference(void)
{
    static struct problem p;
    static struct ref x;
    struct dra_features f = dra_features_default();
    struct dra_scratch *s = dra_scratch_new();
    int iter, compared = 0, allocated = 0;

    rng_state = 42;
    for (iter = 0; iter < 3000; iter++) {
        struct dra_inventory inv;
        struct dra_pools pools;
        struct dra_state st = {0};
        struct dra_claim_result res[3];
        char msg[512], buf[256];
        size_t pi, si, di, c;
        bool counters_allocated = false;
        int rc;

        gen_problem(&p);
        inv = (struct dra_inventory){p.flat, p.nsl, p.nids};
        st.allocated = p.allocated;
        if (dra_pools_gather(&inv, NULL, 0, "n1", &f, &t_ops, &pools, msg, sizeof(msg))) {
            test_fail(__FILE__, __LINE__, "iteration %d: gather: %s", iter, msg);
            break;
        }
        memset(&x, 0, sizeof(x));
        x.p = &p;
        x.pools = &pools;
        for (pi = 0; pi < pools.n; pi++) {
            if (pools.pools[pi].incomplete || pools.pools[pi].invalid)
                continue;
            for (si = 0; si < pools.pools[pi].ntargeting; si++)
                for (di = 0; di < pools.pools[pi].targeting[si]->ndevices; di++) {
                    const struct dra_device *d = &pools.pools[pi].targeting[si]->devices[di];

                    x.c[x.nc++] = (struct cand){d, pools.pools[pi].targeting[si], &pools.pools[pi]};
                    /* the reference does not subtract allocated devices' counters */
                    if (d->nconsumes && p.allocated[d->id])
                        counters_allocated = true;
                }
        }
        rc = dra_allocate(&f, "n1", &pools, &st, p.claims, p.nclaims, &t_ops, s, res, msg,
                          sizeof(msg));
        if (rc != DRA_FAILED && !counters_allocated) {
            ref_search(&x, 0, 0, 0, -1);
            compared++;
            if ((rc == DRA_ALLOCATED) != x.found) {
                test_fail(__FILE__, __LINE__, "iteration %d: allocator %d, reference %s", iter, rc,
                          x.found ? "found" : "none");
            } else if (x.found) {
                allocated++;
                for (c = 0; c < p.nclaims; c++)
                    if (strcmp(devices_of(&res[c], buf, sizeof(buf)), x.out[c]))
                        test_fail(__FILE__, __LINE__,
                                  "iteration %d claim %zu: allocator \"%s\", reference \"%s\"",
                                  iter, c, buf, x.out[c]);
            }
        }
        dra_pools_free(&pools);
    }
    dra_scratch_free(s);
    if (compared < 2000 || allocated < 500)
        test_fail(__FILE__, __LINE__, "only %d problems compared, %d allocated", compared,
                  allocated);
}

static const struct test_case dra_alloc_cases[] = {
    {"first fit in pool, slice and device order", first_fit_order},
    {"matchAttribute backtracks, distinctAttribute", match_attribute_backtracks},
    {"firstAvailable", first_available},
    {"All", all_mode},
    {"device taints", taints},
    {"shared counters backtrack", counters_backtracking},
    {"consumable capacity shares", consumable_capacity},
    {"admin access", admin_access},
    {"invalid pool", invalid_pool},
    {"CEL errors", cel_errors},
    {"older releases (--kube-version)", older_releases},
    {"random problems against the brute-force reference", random_against_reference},
};
TEST_SUITE(dra_alloc, dra_alloc_cases)

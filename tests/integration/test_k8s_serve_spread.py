"""gpusched serve and the real kube-scheduler on PodTopologySpread's system default
constraints (kubernetes.io/hostname maxSkew 3, topology.kubernetes.io/zone maxSkew 5, both
ScheduleAnyway), which apply to a pod without topologySpreadConstraints that a Service,
ReplicationController, ReplicaSet or StatefulSet selects. The real kube-apiserver and
kube-controller-manager (k8s_util): the controllers create the pods, gpusched serve runs with
a token of its own ServiceAccount and deploy/gpusched/rbac.yaml as it ships.

Each workload gets a pool of three nodes per scheduler: "big" (zone a, 64 CPUs), "s1" (zone
b, 8 CPUs), "s2" (zone c, 6 CPUs). Six replicas requesting 500m CPU each: the resource scores
alone put all six on big (the pods nothing selects show it); spread by default they go
big, s1, s2, big, s1, s2 -- each step has one best node, so the outcome does not depend on
how either scheduler breaks ties. kube-scheduler places one copy, gpusched serve the other,
and the nodes must hold the same number of replicas.
"""
import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS_SA, SA = "kube-system", "gpusched"
ROLES = ("big", "s1", "s2")
WORKLOADS = ("replicaset", "statefulset", "replicationcontroller", "service", "none")

_tmp = k8s_util.tmpdir("k8s-serve-spread-tmp-")
_state = {}


def setup():
    if not _state:
        c = k8s_util.cluster("serve-spread")
        c.apply_file("deploy/gpusched/rbac.yaml")
        _state["c"] = c
        _state["kc"] = c.sa_kubeconfig(NS_SA, SA)
    return _state["c"], _state["kc"]


def serve(args, name):
    _, kc = setup()
    return Serve(None, list(args), _tmp, name=name, kubeconfig=kc, wrap=k8s_util.PDEATHSIG)


def namespace(c, ns):
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    wait_for("the default ServiceAccount of " + ns, lambda: c.get_or_none(
        "/api/v1/namespaces/%s/serviceaccounts/default" % ns))


def pool_nodes(c, pool):
    """big, s1 and s2 of a pool, in three zones; returns {node name: role}."""
    shapes = {"big": ("a", "64", "256Gi"), "s1": ("b", "8", "32Gi"), "s2": ("c", "6", "24Gi")}
    names = {}
    for role, (zone, cpu, mem) in shapes.items():
        name = "%s-%s" % (pool, role)
        c.create("/api/v1/nodes", k8s_util.gpu_node(name, gpus=0, cpu=cpu, memory=mem, labels={
            "pool": pool, "topology.kubernetes.io/zone": zone}))
        names[name] = role
    c.wait_nodes_ready(list(names))
    return names


def pod_spec(scheduler, pool):
    return {"schedulerName": scheduler, "nodeSelector": {"pool": pool},
            "terminationGracePeriodSeconds": 0,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "500m", "memory": "512Mi"}}}]}


def create_owner(c, ns, kind, scheduler, pool, replicas=6):
    """The object that selects the six pods of one kind in ns (labelled app=KIND, on the nodes
    of pool): a ReplicaSet or StatefulSet (created with no replicas: scale_up gives it its six
    once the scheduler has it), a ReplicationController or a Service (whose pods create_pods
    makes), or nothing ("none"). Returns the owner reference the pods carry, or None."""
    labels = {"app": kind}
    tmpl = {"metadata": {"labels": labels}, "spec": pod_spec(scheduler, pool)}
    if kind == "replicaset":
        c.create("/apis/apps/v1/namespaces/%s/replicasets" % ns, {
            "apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": kind},
            "spec": {"replicas": 0, "selector": {"matchLabels": labels}, "template": tmpl}})
    elif kind == "statefulset":
        c.create("/apis/apps/v1/namespaces/%s/statefulsets" % ns, {
            "apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": kind},
            "spec": {"replicas": 0, "serviceName": kind, "podManagementPolicy": "Parallel",
                     "selector": {"matchLabels": labels}, "template": tmpl}})
    elif kind == "replicationcontroller":
        # the harness runs no replicationcontroller controller: its pods are made here as it
        # would make them, with the controller reference kube-scheduler follows
        rc = c.create("/api/v1/namespaces/%s/replicationcontrollers" % ns, {
            "apiVersion": "v1", "kind": "ReplicationController", "metadata": {"name": kind},
            "spec": {"replicas": replicas, "selector": labels, "template": tmpl}})
        return {"apiVersion": "v1", "kind": "ReplicationController", "name": kind,
                "uid": rc["metadata"]["uid"], "controller": True, "blockOwnerDeletion": True}
    elif kind == "service":
        c.create("/api/v1/namespaces/%s/services" % ns, {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": kind},
            "spec": {"selector": labels, "ports": [{"port": 80}]}})
    return None


def scale_up(c, ns, kind, replicas=6):
    """Gives the ReplicaSet or StatefulSet of kind its replicas: kube-controller-manager makes
    the pods."""
    if kind in ("replicaset", "statefulset"):
        c.patch("/apis/apps/v1/namespaces/%s/%ss/%s" % (ns, kind, kind),
                {"spec": {"replicas": replicas}}, kind="merge")


def create_pods(c, ns, kind, scheduler, pool, owner, replicas=6):
    """The pods no controller of the harness makes: a ReplicationController's, a Service's
    and the ones nothing selects."""
    if kind in ("replicaset", "statefulset"):
        return
    meta = {"labels": {"app": kind}}
    if owner:
        meta["ownerReferences"] = [owner]
    for i in range(replicas):
        c.create("/api/v1/namespaces/%s/pods" % ns, {
            "apiVersion": "v1", "kind": "Pod", "metadata": dict(meta, name="%s-%d" % (kind, i)),
            "spec": pod_spec(scheduler, pool)})


def per_role(c, ns, kind, roles):
    """{role: replicas on that node} of the bound pods of one workload."""
    out = {r: 0 for r in ROLES}
    for p in c.pods(ns, "app=" + kind):
        n = p["spec"].get("nodeName")
        if n:
            out[roles[n]] += 1
    return out


def place_all(c, ns, scheduler, dead, seen=None):
    """Every workload on its own pool, scheduled by `scheduler`; returns {kind: per_role}.
    The owners come first and the pods after: a pod scheduled before its scheduler has the
    object that selects it is not spread (kube-scheduler's default constraints read its
    informers' objects when the pod is scheduled, and nothing waits for them; each kind is a
    watch of its own, so a pod can arrive before the controller that made it). Hence the
    ReplicaSet and the StatefulSet start with no replicas and are scaled up last.
    seen(kind, ns), when given, waits until the scheduler has the owner of kind: gpusched
    serve says so in its log; kube-scheduler gives no sign, and its pods come as late as the
    owners of all five kinds and the pods of three take to create."""
    namespace(c, ns)
    roles = {}
    for kind in WORKLOADS:
        pool = "%s-%s" % (ns, kind)
        roles[kind] = pool_nodes(c, pool)
    owners = {kind: create_owner(c, ns, kind, scheduler, "%s-%s" % (ns, kind)) for kind in WORKLOADS}
    if seen:
        for kind in ("replicaset", "statefulset", "replicationcontroller", "service"):
            seen(kind, ns)
    for kind in WORKLOADS:
        create_pods(c, ns, kind, scheduler, "%s-%s" % (ns, kind), owners[kind])
    for kind in WORKLOADS:
        scale_up(c, ns, kind)
    for kind in WORKLOADS:
        wait_for("six %s pods bound by %s" % (kind, scheduler),
                 lambda: dead() or sum(per_role(c, ns, kind, roles[kind]).values()) == 6, timeout=120)
    return {kind: per_role(c, ns, kind, roles[kind]) for kind in WORKLOADS}


def placements():
    """The same workloads placed by kube-scheduler and by gpusched serve (kept for the cases)."""
    if "placed" in _state:
        if isinstance(_state["placed"], Exception):
            raise _state["placed"]
        return _state["placed"]
    try:
        _state["placed"] = place_both()
    except Exception as e:  # every case reports the one failure
        _state["placed"] = e
        raise
    return _state["placed"]


def place_both():
    c, _ = setup()
    ks = k8s_util.kube_scheduler(c)
    try:
        want = place_all(c, "spread-ks", "default-scheduler", ks.alive)
    finally:
        ks.stop()
    sv = serve(["-v", "4"], "spread")

    def seen(kind, ns):
        what = {"replicaset": "ReplicaSet", "statefulset": "StatefulSet",
                "replicationcontroller": "ReplicationController", "service": "Service"}[kind]
        wait_for("gpusched serve's %s %s/%s" % (what, ns, kind), lambda: sv._dead() or sv.grep(
            r'"%s added" object="?%s/%s' % (what, ns, kind)))
    try:
        got = place_all(c, "spread-gs", "gpusched", sv._dead, seen)
        synced = [k for k in ("Service", "ReplicationController", "ReplicaSet", "StatefulSet", "Namespace")
                  if not sv.grep(r'"%s cache synced"' % k)]
        refused = sv.grep(r"forbidden")
    finally:
        rc = sv.stop()
    return dict(ks=want, gs=got, synced=synced, refused=refused, rc=rc)


def check_kind(kind):
    s = placements()
    util.check_eq(s["gs"][kind], s["ks"][kind], "%s: replicas per node, gpusched serve against kube-scheduler" % kind)
    util.check_eq(s["gs"][kind], {"big": 2, "s1": 2, "s2": 2}, "%s: replicas per node (spread by default)" % kind)


def test_replicaset_pods_spread_as_kube_scheduler_spreads_them():
    check_kind("replicaset")


def test_statefulset_pods_spread_as_kube_scheduler_spreads_them():
    check_kind("statefulset")


def test_replicationcontroller_pods_spread_as_kube_scheduler_spreads_them():
    check_kind("replicationcontroller")


def test_service_selected_pods_spread_as_kube_scheduler_spreads_them():
    check_kind("service")


def test_pods_nothing_selects_are_not_spread():
    s = placements()
    util.check_eq(s["gs"]["none"], s["ks"]["none"], "unselected pods per node, against kube-scheduler")
    util.check_eq(s["gs"]["none"], {"big": 6, "s1": 0, "s2": 0}, "unselected pods per node (resources only)")


def test_informers_synced_with_the_shipped_rbac():
    s = placements()
    util.check_eq(s["synced"], [], "informers that never synced with deploy/gpusched/rbac.yaml")
    util.check_eq(s["refused"], None, "a forbidden request in serve's log")
    util.check_eq(s["rc"], 0, "exit status on SIGTERM")


def test_a_service_created_changed_and_deleted_while_serving_changes_later_placements():
    """Plain pods app=web, one at a time: without a Service they go where the resources say
    (big); once a Service selects them, they spread (s1, then s2); when the Service's selector
    stops matching, and when it is deleted, they go to big again."""
    c, _ = setup()
    ns = "spread-live"
    namespace(c, ns)
    roles = pool_nodes(c, ns)
    sv = serve(["-v", "4"], "live")
    n = [0]

    def place():
        name = "web-%d" % n[0]
        n[0] += 1
        c.create("/api/v1/namespaces/%s/pods" % ns, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"app": "web"}},
            "spec": pod_spec("gpusched", ns)})
        node = wait_for(name + " bound", lambda: sv._dead() or c.get(
            "/api/v1/namespaces/%s/pods/%s" % (ns, name))["spec"].get("nodeName"))
        return roles[node]

    def seen(verb):
        # serve logs each watch event at -v 4 once it is in the cache: the next pod sees it
        want = sv.count(r'"Service %s" object="%s/web"' % (verb, ns)) + 1
        return lambda: sv._dead() or sv.count(r'"Service %s" object="%s/web"' % (verb, ns)) >= want
    try:
        wait_for("serve's caches synced", lambda: sv._dead() or sv.grep(r'"StatefulSet cache synced"'))
        got = [place(), place()]
        added = seen("added")
        c.create("/api/v1/namespaces/%s/services" % ns, {
            "apiVersion": "v1", "kind": "Service", "metadata": {"name": "web"},
            "spec": {"selector": {"app": "web"}, "ports": [{"port": 80}]}})
        wait_for("the Service in serve's cache", added)
        got += [place(), place()]
        updated = seen("updated")
        c.patch("/api/v1/namespaces/%s/services/web" % ns, {"spec": {"selector": {"app": "other"}}})
        wait_for("the Service's new selector in serve's cache", updated)
        got += [place()]
        updated = seen("updated")
        c.patch("/api/v1/namespaces/%s/services/web" % ns, {"spec": {"selector": {"app": "web"}}})
        wait_for("the Service's selector back in serve's cache", updated)
        got += [place()]
        deleted = seen("deleted")
        c.delete("/api/v1/namespaces/%s/services/web" % ns)
        wait_for("the Service gone from serve's cache", deleted)
        got += [place()]
    finally:
        rc = sv.stop()
    # big holds 2 when the Service appears: s1, then s2 (fewer matching pods, then more room);
    # with big 3, s1 1, s2 1 after the selector's return, s1 (more room than s2)
    util.check_eq(got, ["big", "big", "s1", "s2", "big", "s1", "big"], "nodes of web-0 .. web-6")
    util.check_eq(rc, 0, "exit status on SIGTERM")

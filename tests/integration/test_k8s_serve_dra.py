"""gpusched serve and Dynamic Resource Allocation on the real control plane (k8s_util: the real
kube-apiserver, kube-controller-manager with the resource-claim controller), judged by the real
kube-scheduler v1.37.2: the same pods, once under each, on twin nodes and devices of their own
(prefix "ks-" for kube-scheduler, "gs-" for gpusched), must end the same way:

- a pod with a ResourceClaim, a pod with a ResourceClaimTemplate (its claim made by the
  resource-claim controller), two pods created together whose claims want the one device of
  its kind (the second must not get it while the first's allocation is in flight), and a pod
  whose bind the API server refuses (a ValidatingAdmissionPolicy): PreBind allocated and
  reserved its claim, Unreserve took the reservation back, the allocation stays;
- placements, each claim's status.allocation (results, config, node selector; the timestamp
  only as present), its finalizers and reservedFor, and the FailedScheduling message of the
  pod left without a device.
gpusched runs with deploy/gpusched/rbac.yaml's role and must not be refused anything; a pod
asking for an extended resource that a DeviceClass serves is refused with a clear event.
"""
import copy
import json
import os

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

NS_SA, SA = "kube-system", "gpusched"
DRIVER = "gpu.example.com"  # behind the prefix: "ks-gpu.example.com"

_tmp = k8s_util.tmpdir("k8s-serve-dra-tmp-")
_state = {}


def setup():
    if not _state:
        c = k8s_util.cluster("serve-dra")
        c.apply_file("deploy/gpusched/rbac.yaml")
        kc = c.sa_kubeconfig(NS_SA, SA)
        # the bind of any pod named bind-fails is refused by the API server
        c.apply([{"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
                  "metadata": {"name": "no-bind-fails"},
                  "spec": {"failurePolicy": "Fail",
                           "matchConstraints": {"resourceRules": [{
                               "apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                               "resources": ["pods/binding"]}]},
                           "validations": [{"expression": "object.metadata.name != 'bind-fails'",
                                            "message": "binding bind-fails is refused"}]}},
                 {"apiVersion": "admissionregistration.k8s.io/v1",
                  "kind": "ValidatingAdmissionPolicyBinding", "metadata": {"name": "no-bind-fails"},
                  "spec": {"policyName": "no-bind-fails", "validationActions": ["Deny"]}}])
        policy_in_effect(c)
        for prefix in ("ks-", "gs-"):
            world(c, prefix)
        _state["c"], _state["kc"] = c, kc
    return _state["c"], _state["kc"]


def policy_in_effect(c):
    """The API server loads admission policies in the background: wait until a dry-run bind of
    a probe pod named bind-fails is refused (else the first scheduler's bind could land)."""
    namespace(c, "vap-probe")
    c.create("/api/v1/namespaces/vap-probe/pods",
             {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bind-fails"},
              "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})

    def refused():
        st, out = c.request("POST", "/api/v1/namespaces/vap-probe/pods/bind-fails/binding?dryRun=All",
                            {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": "bind-fails"},
                             "target": {"apiVersion": "v1", "kind": "Node", "name": "nowhere"}},
                            ok=(200, 201, 403, 404, 422))
        return st in (403, 422) and "no-bind-fails" in json.dumps(out)
    wait_for("the ValidatingAdmissionPolicy in effect", refused)


def device(name, model):
    return {"name": name, "attributes": {"model": {"string": model}, "index": {"int": int(name[-1])}},
            "capacity": {"memory": {"value": "16Gi"}}}


def world(c, p):
    """Two nodes, a DeviceClass with a config, a slice per node: p+"a" has three small GPUs,
    p+"b" one big, one small and one fpga."""
    for n in ("a", "b"):
        c.create_node(k8s_util.gpu_node(p + n, gpus=0, labels={"dra-test": p.strip("-")}))
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": p + "gpu"},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % (p + DRIVER)}}],
                       "config": [{"opaque": {"driver": p + DRIVER, "parameters": {"class": "x"}}}]}}])
    devs = {"a": [device("a0", "small"), device("a1", "small"), device("a2", "small")],
            "b": [device("b0", "big"), device("b1", "small"), device("b2", "fpga")]}
    for n in ("a", "b"):
        c.create("/apis/resource.k8s.io/v1/resourceslices",
                 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": p + n + "-" + DRIVER},
                  "spec": {"driver": p + DRIVER, "nodeName": p + n,
                           "pool": {"name": p + n, "generation": 1, "resourceSliceCount": 1},
                           "devices": devs[n]}})


def claim_spec(p, model, count=1, config=False):
    spec = {"devices": {"requests": [{"name": "gpus", "exactly": {
        "deviceClassName": p + "gpu", "count": count, "allocationMode": "ExactCount",
        "selectors": [{"cel": {"expression": "device.attributes['%s'].model == '%s'" % (p + DRIVER, model)}}]}}]}}
    if config:
        spec["devices"]["config"] = [{"requests": ["gpus"],
                                      "opaque": {"driver": p + DRIVER, "parameters": {"claim": "yes"}}}]
    return spec


def pod(name, scheduler, claims, node=None):
    spec = {"schedulerName": scheduler, "terminationGracePeriodSeconds": 0,
            "resourceClaims": claims,
            "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10",
                            "resources": {"requests": {"cpu": "100m"},
                                          "claims": [{"name": cl["name"]} for cl in claims]}}]}
    if node:
        spec["nodeSelector"] = {"kubernetes.io/hostname": node}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def namespace(c, ns):
    c.create("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    wait_for("the default ServiceAccount of " + ns,
             lambda: c.get_or_none("/api/v1/namespaces/%s/serviceaccounts/default" % ns))


def claims_path(ns):
    return "/apis/resource.k8s.io/v1/namespaces/%s/resourceclaims" % ns


def create_pods(c, ns, p, scheduler):
    """The claims, the template and the pods; the two rivals are created one after the other
    before the scheduler starts, so that both wait when it does."""
    for name, model, cfg in (("single", "big", True), ("rival-1", "fpga", False),
                             ("rival-2", "fpga", False), ("doomed", "small", False)):
        # compact JSON, as kubectl and client-go send it: the API server keeps opaque parameters
        # as sent, and a JSON client's later write of the claim (gpusched's finalizer patch)
        # would otherwise be refused, "spec: field is immutable" (docs/serve.md)
        c.request("POST", claims_path(ns), json.dumps(
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
             "spec": claim_spec(p, model, config=cfg)}, separators=(",", ":")))
    c.create("/apis/resource.k8s.io/v1/namespaces/%s/resourceclaimtemplates" % ns,
             {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
              "metadata": {"name": "two-small"}, "spec": {"spec": claim_spec(p, "small", count=2)}})
    pods = [pod("claim-pod", scheduler, [{"name": "gpu", "resourceClaimName": "single"}]),
            pod("tmpl-pod", scheduler, [{"name": "gpus", "resourceClaimTemplateName": "two-small"}]),
            pod("rival-1", scheduler, [{"name": "gpu", "resourceClaimName": "rival-1"}]),
            pod("rival-2", scheduler, [{"name": "gpu", "resourceClaimName": "rival-2"}]),
            pod("bind-fails", scheduler, [{"name": "gpu", "resourceClaimName": "doomed"}], node=p + "b")]
    for x in pods:
        c.create("/api/v1/namespaces/%s/pods" % ns, x)
    # the template's claim, made by the resource-claim controller
    wait_for("tmpl-pod's claim", lambda: any(
        (s.get("resourceClaimName") or "") for s in
        (c.get("/api/v1/namespaces/%s/pods/tmpl-pod" % ns).get("status") or {}).get("resourceClaimStatuses") or []))


RIVALS = ("rival-1", "rival-2")


def rivals(placed):
    """(winner, loser) of the two rivals for the one fpga, or None while neither is bound.
    Which one wins is not fixed in kube-scheduler: the two are alike but for their names and
    both wait when it starts, and it queues the pods that exist at its start in the order its
    pod informer hands them over, which varies from run to run (client-go's watch-list gathers
    the initial objects in a map and hands over the map's iteration order: a rotation of name
    order that starts at a random slot). Its -v=3 log shows it: "Handlers synced" (every
    ResourceSlice synced) before the first attempt, then the rivals tried in the order of their
    "Add event for unscheduled pod" lines; rival-2 first in 6 of 17 runs on an idle machine.
    So the runs are compared by role, winner and loser, not by name."""
    won = [n for n in RIVALS if placed.get(n)]
    if len(won) > 1:
        raise AssertionError("both rivals bound: %s" % placed)
    if not won:
        return None
    return won[0], RIVALS[1 - RIVALS.index(won[0])]


def observe(c, ns, p):
    """The run's outcome, with the prefix taken out of names, once it has settled, else None
    (_state["unmet"] says what it waits for): three pods bound (one of them a rival), the other
    rival failed, the doomed claim allocated and (between two attempts) reserved for nobody.
    The outcome is made of the very reads that found it settled: each new attempt of bind-fails
    reserves the doomed claim again for a moment, which a later read could catch."""
    pods = {x["metadata"]["name"]: x for x in c.pods(ns)}
    placed = {n: x["spec"].get("nodeName") for n, x in pods.items()}
    _state["unmet"] = "placements %s" % placed
    if not all(placed.get(n) for n in ("claim-pod", "tmpl-pod")):
        return None
    roles = rivals(placed)
    if not roles:
        return None
    if placed.get("bind-fails"):
        raise AssertionError("bound: %s" % placed)
    winner, loser = roles
    _state["unmet"] = "%s's FailedScheduling event" % loser
    ev = [e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == loser]
    if not ev:
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    doomed = (claims.get("doomed") or {}).get("status") or {}
    _state["unmet"] = "the doomed claim allocated and not reserved: %s" % doomed
    if not doomed.get("allocation") or doomed.get("reservedFor"):
        return None

    def strip(v):
        if isinstance(v, str):
            # the rivals by role (their pods and claims share their names)
            v = v.replace(winner, "\0W").replace(loser, "rival-loser").replace("\0W", "rival-winner")
            return v.replace(p, "P-")
        if isinstance(v, list):
            return [strip(x) for x in v]
        if isinstance(v, dict):
            return {k: strip(x) for k, x in v.items()}
        return v
    out = {"placement": {strip(n): strip(x) for n, x in sorted(placed.items())}, "claims": {}}
    for n, x in sorted(pods.items()):
        for pc in x["spec"]["resourceClaims"]:
            cname = pc.get("resourceClaimName")
            if not cname:
                cname = next((s.get("resourceClaimName") for s in
                              (x.get("status") or {}).get("resourceClaimStatuses") or []
                              if s["name"] == pc["name"]), None)
            cl = claims.get(cname) or {}
            st = copy.deepcopy(cl.get("status") or {})
            alloc = st.get("allocation")
            if alloc is not None:
                alloc["allocationTimestamp"] = "set" if alloc.get("allocationTimestamp") else "unset"
            out["claims"][strip("%s/%s" % (n, pc["name"]))] = strip({
                "allocation": alloc,
                "reservedFor": [r["name"] for r in st.get("reservedFor") or []],
                "finalizers": sorted((cl.get("metadata") or {}).get("finalizers") or [])})
    out["loser's message"] = strip(ev[0]["note"])
    return out


def run(scheduler_name):
    """Creates the pods of one scheduler in its namespace, runs the scheduler until the run
    settles and stops it (also when the run fails); returns the outcome and, for gpusched,
    its exit status on SIGTERM."""
    c, kc = setup()
    ks = scheduler_name == "default-scheduler"
    p = "ks-" if ks else "gs-"
    ns = p + "dra"
    namespace(c, ns)
    create_pods(c, ns, p, scheduler_name)
    if ks:
        proc = k8s_util.kube_scheduler(c, "-v=3")
        dead = proc.alive  # (raises when it died)
    else:
        proc = Serve(None, ["-v", "5"], _tmp, name="dra", kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
        dead = proc._dead
    try:
        try:
            out = wait_for("the %s run to settle" % scheduler_name, lambda: dead() or observe(c, ns, p),
                           timeout=120)
        except AssertionError as e:
            raise AssertionError("%s (waiting for %s)" % (e, _state.get("unmet")))
        return out, None if ks else proc.stop()
    except AssertionError as e:
        tail = " | ".join(proc.log().splitlines()[-40:]) if ks else proc.log_tail(40)
        raise AssertionError("%s; %s's log: %s" % (e, scheduler_name, tail))
    finally:
        if ks:
            proc.stop()
        else:
            proc.kill()


def test_same_placements_and_allocations_as_kube_scheduler():
    ks, _ = run("default-scheduler")
    gs, status = run("gpusched")
    c, _ = setup()
    util.check_eq(gs["placement"], ks["placement"], "placements, against kube-scheduler's")
    # the devices per request first (the clearest difference), then the whole status
    def devices(o):
        return {k: [(r["request"], r["driver"], r["pool"], r["device"])
                    for r in ((v["allocation"] or {}).get("devices") or {}).get("results") or []]
                for k, v in o["claims"].items()}
    util.check_eq(devices(gs), devices(ks), "devices per claim, against kube-scheduler's")
    for k in sorted(ks["claims"]):
        util.check_eq(gs["claims"].get(k), ks["claims"][k], "claim of %s, against kube-scheduler's" % k)
    util.check_eq(gs["loser's message"], ks["loser's message"],
                  "the losing rival's FailedScheduling message, against kube-scheduler's")
    # nothing gpusched asked for was refused
    forbidden = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA)) if e["responseStatus"]["code"] == 403]
    util.check_eq([(e["verb"], e["requestURI"]) for e in forbidden], [], "requests RBAC refused")
    # Unreserve: the failed bind's pod taken off its claim by a status patch
    patches = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA), verb="patch", resource="resourceclaims",
                                  subresource="status") if e["objectRef"].get("name") == "doomed"]
    if not patches:
        raise AssertionError("no status patch of the doomed claim after its pod's bind failed")
    util.check_eq(status, 0, "gpusched's exit status on SIGTERM")


def test_extended_resource_of_a_device_class_is_refused_with_an_event():
    """On its own (namespace, gpusched): it passes or fails whatever the other tests do."""
    c, kc = setup()
    ns = "gs-ext-refused"
    namespace(c, ns)
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gs-ext"},
              "spec": {"extendedResourceName": "example.com/gpu",
                       "selectors": [{"cel": {"expression": "device.driver == 'gs-%s'" % DRIVER}}]}}])
    sv = Serve(None, ["-v", "5"], _tmp, name="ext-refused", kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
    try:
        c.create("/api/v1/namespaces/%s/pods" % ns,
                 {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ext"},
                  "spec": {"schedulerName": "gpusched", "containers": [{
                      "name": "c", "image": "registry.k8s.io/pause:3.10",
                      "resources": {"limits": {"example.com/gpu": "1"}}}]}})
        ev = wait_for("the refusal's event", lambda: sv._dead() or [
            e for e in c.events(ns, "FailedScheduling") if e["regarding"]["name"] == "ext"])
        if "does not create the ResourceClaim of extended resources" not in ev[0]["note"]:
            raise AssertionError("unexpected message: %r" % ev[0]["note"])
        util.check_eq(c.get("/api/v1/namespaces/%s/pods/ext" % ns)["spec"].get("nodeName"), None, "ext's node")
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")
    finally:
        sv.kill()


# ---- shares of a device, PostFilter's deallocation, binding conditions (each scenario on
# nodes and devices of its own, prefix "ks-"/"gs-" plus the scenario's letter) ----

UUID = r"^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$"


def scenario_world(c, p, devices, node_names=("a",), cls_extra=None):
    """Nodes p+n, a DeviceClass p+"gpu" of driver p+DRIVER, one slice per node with
    devices[n] (a list of device objects)."""
    for n in node_names:
        c.create_node(k8s_util.gpu_node(p + n, gpus=0, labels={"dra-test": p.strip("-")}))
    c.apply([{"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": p + "gpu"},
              "spec": {"selectors": [{"cel": {"expression": "device.driver == '%s'" % (p + DRIVER)}}]}}])
    for n in node_names:
        c.create("/apis/resource.k8s.io/v1/resourceslices",
                 {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                  "metadata": {"name": p + n + "-" + DRIVER},
                  "spec": {"driver": p + DRIVER, "nodeName": p + n,
                           "pool": {"name": p + n, "generation": 1, "resourceSliceCount": 1},
                           "devices": devices[n]}})


def create_claim(c, ns, name, spec):
    c.request("POST", claims_path(ns), json.dumps(
        {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": {"name": name},
         "spec": spec}, separators=(",", ":")))


def exactly(p, capacity=None, selector=None):
    ex = {"deviceClassName": p + "gpu", "allocationMode": "ExactCount", "count": 1}
    if capacity:
        ex["capacity"] = {"requests": capacity}
    if selector:
        ex["selectors"] = [{"cel": {"expression": selector}}]
    return {"devices": {"requests": [{"name": "gpu", "exactly": ex}]}}


def start_scheduler(c, kc, scheduler, name, plugin_config=None):
    """kube-scheduler or gpusched serve; plugin_config: the profile's pluginConfig (a
    KubeSchedulerConfiguration file for either)."""
    cfg = []
    if plugin_config:
        path = os.path.join(_tmp, "config-%s-%s.yaml" % (name, scheduler))
        conf = {"apiVersion": "kubescheduler.config.k8s.io/v1", "kind": "KubeSchedulerConfiguration",
                "leaderElection": {"leaderElect": False},
                "profiles": [{"schedulerName": scheduler, "pluginConfig": plugin_config}]}
        if scheduler == "default-scheduler":
            conf["clientConnection"] = {"kubeconfig": c.scheduler_kubeconfig}
        with open(path, "w") as f:
            json.dump(conf, f)
        cfg = ["--config", path]
    if scheduler == "default-scheduler":
        proc = k8s_util.kube_scheduler(c, *cfg)
        return proc, proc.alive
    proc = Serve(None, ["-v", "5"] + cfg, _tmp, name=name, kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
    return proc, proc._dead


def run_scenario(scheduler, p, make, until, during=None, timeout=120, plugin_config=None):
    """One scheduler's run of a scenario: make(c, ns, p, scheduler) creates its objects in a
    namespace of its own, then the scheduler runs until until(c, ns, p) gives a value (during,
    when given, is called on each poll: the test's part, e.g. a driver setting conditions).
    Returns (c, ns, value, proc); gpusched is left running (the caller stops it)."""
    c, kc = setup()
    ns = p + "x"
    namespace(c, ns)
    make(c, ns, p, scheduler)
    proc, dead = start_scheduler(c, kc, scheduler, p.strip("-"), plugin_config)
    unmet = {}

    def poll():
        if dead():
            return "died"
        if during:
            during(c, ns, p)
        return until(c, ns, p, unmet)
    try:
        try:
            v = wait_for("the %s run of %s to settle" % (scheduler, p), poll, timeout=timeout)
        except AssertionError as e:
            raise AssertionError("%s (waiting for %s)" % (e, unmet.get("what")))
        if v == "died":
            raise AssertionError("%s died" % scheduler)
        return c, ns, v, proc
    except BaseException as e:
        if scheduler != "default-scheduler":  # (stopped here on any failure: the caller only
            proc.stop()                         # stops it after a run that settled)
            if isinstance(e, AssertionError):
                raise AssertionError("%s; gpusched's log: %s" % (e, proc.log_tail(60)))
        raise
    finally:
        if scheduler == "default-scheduler":
            proc.stop()


def unprefixed(v, p):
    if isinstance(v, str):
        return v.replace(p, "P-")
    if isinstance(v, list):
        return [unprefixed(x, p) for x in v]
    if isinstance(v, dict):
        return {k: unprefixed(x, p) for k, x in v.items()}
    return v


def claim_view(cl, p):
    """A claim's status and finalizers as compared: the timestamp only as present, each
    shareID only as a well-formed random UUID (kube-scheduler makes a new one per share)."""
    import re
    st = copy.deepcopy(cl.get("status") or {})
    alloc = st.get("allocation")
    if alloc is not None:
        alloc["allocationTimestamp"] = "set" if alloc.get("allocationTimestamp") else "unset"
        for r in (alloc.get("devices") or {}).get("results") or []:
            if "shareID" in r:
                r["shareID"] = "uuid" if re.match(UUID, r["shareID"]) else "bad: " + r["shareID"]
    return unprefixed({"allocation": alloc,
                       "reservedFor": [r["name"] for r in st.get("reservedFor") or []],
                       "devices": st.get("devices"),
                       "finalizers": sorted((cl.get("metadata") or {}).get("finalizers") or [])}, p)


def share_device(name):
    return {"name": name, "allowMultipleAllocations": True,
            "attributes": {"index": {"int": int(name[-1])}},
            "capacity": {"memory": {"value": "16Gi",
                                    "requestPolicy": {"default": "1Gi",
                                                      "validRange": {"min": "1Gi", "step": "1Gi"}}},
                         "cores": {"value": "8"},
                         "bw": {"value": "100", "requestPolicy": {"default": "40",
                                                                  "validValues": ["10", "40", "100"]}}}}


SHARES = {"share-a": {"memory": "1500Mi", "cores": "2", "bw": "20"},
          "share-b": {"cores": "3"},
          "share-c": {"memory": "3Gi", "cores": "3", "bw": "10"}}


def make_shares(c, ns, p, scheduler):
    for name, cap in sorted(SHARES.items()):
        create_claim(c, ns, name, exactly(p, capacity=cap))
        c.create("/api/v1/namespaces/%s/pods" % ns,
                 pod(name, scheduler, [{"name": "gpu", "resourceClaimName": name}]))


def shares_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    unmet["what"] = "placements %s" % placed
    if not all(placed.get(n) for n in SHARES):
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    return {"placement": unprefixed(placed, p),
            "claims": {n: claim_view(claims[n], p) for n in SHARES}}


def test_shares_of_a_device_with_allow_multiple_allocations_as_kube_scheduler():
    """Three claims share one device with allowMultipleAllocations: each result has a new
    shareID and the capacity it consumes (a request rounded up to the policy's step, the
    policy's default, the capacity's value, a valid value), written as kube-scheduler writes
    them."""
    c, _ = setup()
    for p in ("ks-s-", "gs-s-"):
        scenario_world(c, p, {"a": [share_device("s0")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-s-", make_shares, shares_settled)
    _, _, gs, sv = run_scenario("gpusched", "gs-s-", make_shares, shares_settled)
    try:
        util.check_eq(gs["placement"], ks["placement"], "placements, against kube-scheduler's")
        for n in sorted(SHARES):
            util.check_eq(gs["claims"][n], ks["claims"][n], "claim %s, against kube-scheduler's" % n)
        util.check_eq([r.get("shareID") for n in sorted(SHARES)
                       for r in gs["claims"][n]["allocation"]["devices"]["results"]],
                      ["uuid"] * 3, "gpusched's shareIDs")
        results = ks["claims"]["share-a"]["allocation"]["devices"]["results"]
        util.check_eq(results[0].get("consumedCapacity"), {"memory": "2Gi", "cores": "2", "bw": "40"},
                      "kube-scheduler's consumed capacity of share-a (the test's premise)")
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def make_stale(c, ns, p, scheduler):
    """A claim allocated (by someone else: the test writes its status) to a device of a node
    that does not exist, reserved for nobody, and a pod using it."""
    create_claim(c, ns, "stale", exactly(p))
    cl = c.get(claims_path(ns) + "/stale")
    cl["status"] = {"allocation": {
        "devices": {"results": [{"request": "gpu", "driver": p + DRIVER, "pool": p + "gone", "device": "g0"}]},
        "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
            {"key": "metadata.name", "operator": "In", "values": [p + "gone"]}]}]}}}
    c.request("PUT", claims_path(ns) + "/stale/status", cl)
    c.create("/api/v1/namespaces/%s/pods" % ns, pod("stale", scheduler, [{"name": "gpu", "resourceClaimName": "stale"}]))


def stale_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    unmet["what"] = "placements %s" % placed
    if not placed.get("stale"):
        return None
    cl = c.get(claims_path(ns) + "/stale")
    return {"placement": unprefixed(placed, p), "claim": claim_view(cl, p),
            "messages": sorted(set(unprefixed(e["note"], p) for e in c.events(ns, "FailedScheduling")
                                   if e["regarding"]["name"] == "stale"))}


def test_postfilter_deallocates_a_claim_available_nowhere_as_kube_scheduler():
    """A pod's claim is allocated on a node that is gone and reserved for nobody: Filter finds
    it available on no node, PostFilter deallocates it in the API (an update of its status)
    and the next attempt allocates it afresh; the same messages, the same end as
    kube-scheduler's."""
    c, _ = setup()
    for p in ("ks-d-", "gs-d-"):
        scenario_world(c, p, {"a": [device("d0", "small")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-d-", make_stale, stale_settled)
    _, ns, gs, sv = run_scenario("gpusched", "gs-d-", make_stale, stale_settled)
    try:
        util.check_eq(gs, ks, "the pod, its claim and its FailedScheduling messages, against kube-scheduler's")
        if not any("deallocation of ResourceClaim completed" in m for m in ks["messages"]):
            raise AssertionError("kube-scheduler did not deallocate (the test's premise): %s" % ks["messages"])
        # the deallocation is gpusched's update of the claim's status
        puts = [e for e in c.audit(user=k8s_util.sa_user(NS_SA, SA), verb="update", resource="resourceclaims",
                                   subresource="status")
                if e["objectRef"].get("name") == "stale" and e["objectRef"].get("namespace") == ns]
        util.check_eq(len(puts) >= 2, True, "gpusched's status updates of the claim (deallocation, then PreBind)")
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def bc_device(name):
    return {"name": name, "attributes": {"index": {"int": int(name[-1])}},
            "bindingConditions": ["attached"], "bindingFailureConditions": ["failed"]}


def make_bc(c, ns, p, scheduler):
    for name, index in (("bc-ok", 0), ("bc-fail", 1)):
        create_claim(c, ns, name, exactly(p, selector="device.attributes['%s'].index == %d" % (p + DRIVER, index)))
        c.create("/api/v1/namespaces/%s/pods" % ns, pod(name, scheduler, [{"name": "gpu", "resourceClaimName": name}]))


def set_condition(c, ns, cl, ctype, reason, message):
    """The driver's part: the device's condition in the claim's status.devices (a conflict
    only means: again at the next poll)."""
    r = cl["status"]["allocation"]["devices"]["results"][0]
    cl["status"]["devices"] = [{"driver": r["driver"], "pool": r["pool"], "device": r["device"],
                                "conditions": [{"type": ctype, "status": "True", "reason": reason,
                                                "message": message,
                                                "lastTransitionTime": "2026-01-01T00:00:00Z"}]}]
    st, _ = c.request("PUT", claims_path(ns) + "/" + cl["metadata"]["name"] + "/status", cl, ok=(200, 409))
    return st == 200


def bc_driver():
    """A driver for the binding conditions scenario: bc-ok's device gets "attached" once its
    pod waits; bc-fail's gets "failed" the first time, "attached" when it waits again (the
    claim deallocated and allocated again: its status.devices went with the allocation)."""
    phase = {"bc-fail": 0}

    def during(c, ns, p):
        for cl in c.items(claims_path(ns)):
            name, st = cl["metadata"]["name"], cl.get("status") or {}
            waiting = st.get("allocation") and st.get("reservedFor") and not st.get("devices")
            if name == "bc-ok" and waiting:
                set_condition(c, ns, cl, "attached", "Attached", "")
            elif name == "bc-fail":
                if phase["bc-fail"] == 0 and waiting:
                    if set_condition(c, ns, cl, "failed", "Broken", "no \"luck\""):
                        phase["bc-fail"] = 1
                elif phase["bc-fail"] == 1 and waiting:  # (deallocation cleared status.devices)
                    set_condition(c, ns, cl, "attached", "Attached", "")
    return during


def bc_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    if not all(placed.get(n) for n in ("bc-ok", "bc-fail")):
        unmet["what"] = "placements %s; bc-fail's claim %s; events %s" % (
            placed, (c.get(claims_path(ns) + "/bc-fail") or {}).get("status"),
            [(e["regarding"]["name"], e["reason"], e["note"]) for e in c.events(ns)])
        return None
    claims = {x["metadata"]["name"]: x for x in c.items(claims_path(ns))}
    events = sorted(set((e["regarding"]["name"], e["reason"], unprefixed(e["note"], p))
                        for e in c.events(ns) if e["reason"] in ("FailedScheduling", "BindingConditionsPending")))
    return {"placement": unprefixed(placed, p),
            "claims": {n: claim_view(claims[n], p) for n in ("bc-ok", "bc-fail")},
            "events": events}


def test_prebind_waits_for_binding_conditions_as_kube_scheduler():
    """Devices with binding conditions: PreBind writes the claim, records
    BindingConditionsPending and binds only once the driver set the condition; a failure
    condition fails PreBind, the next attempt finds the claim unavailable, PostFilter
    deallocates it, and it is allocated and waited for again. The same events and the same
    end as kube-scheduler's."""
    c, _ = setup()
    for p in ("ks-b-", "gs-b-"):
        scenario_world(c, p, {"a": [bc_device("c0"), bc_device("c1")]})
    _, _, ks, _ = run_scenario("default-scheduler", "ks-b-", make_bc, bc_settled, during=bc_driver())
    _, ns, gs, sv = run_scenario("gpusched", "gs-b-", make_bc, bc_settled, during=bc_driver())
    try:
        util.check_eq(gs["placement"], ks["placement"], "placements, against kube-scheduler's")
        util.check_eq(gs["claims"], ks["claims"], "claims, against kube-scheduler's")
        util.check_eq(gs["events"], ks["events"], "FailedScheduling and BindingConditionsPending events, "
                      "against kube-scheduler's")
        if not any("device binding failed" in e[2] for e in ks["events"]):
            raise AssertionError("kube-scheduler's PreBind did not fail (the test's premise): %s" % ks["events"])
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")


def make_bt(c, ns, p, scheduler):
    create_claim(c, ns, "bt", exactly(p))
    c.create("/api/v1/namespaces/%s/pods" % ns, pod("bt", scheduler, [{"name": "gpu", "resourceClaimName": "bt"}]))


def bt_driver():
    """A driver that lets the first allocation's wait time out and attaches the device of the
    next one (told apart by its allocationTimestamp)."""
    first = {}

    def during(c, ns, p):
        cl = c.get_or_none(claims_path(ns) + "/bt")
        st = (cl or {}).get("status") or {}
        if not (st.get("allocation") and st.get("reservedFor") and not st.get("devices")):
            return
        ts = st["allocation"].get("allocationTimestamp")
        first.setdefault("ts", ts)
        if ts != first["ts"]:
            set_condition(c, ns, cl, "attached", "Attached", "")
    return during


def bt_settled(c, ns, p, unmet):
    placed = {x["metadata"]["name"]: x["spec"].get("nodeName") for x in c.pods(ns)}
    if not placed.get("bt"):
        unmet["what"] = "placements %s; events %s" % (
            placed, [(e["regarding"]["name"], e["reason"], e["note"]) for e in c.events(ns)])
        return None
    # which of the two timeouts PreBind's poll meets first (its deadline, or the claim's
    # allocationTimestamp plus the timeout) is a race in kube-scheduler too
    events = sorted(set((e["regarding"]["name"], e["reason"],
                         unprefixed(e["note"], p).split("device binding timeout")[0] +
                         ("device binding timeout..." if "device binding timeout" in e["note"] else ""))
                        for e in c.events(ns) if e["reason"] in ("FailedScheduling", "BindingConditionsPending")))
    return {"placement": unprefixed(placed, p), "claim": claim_view(c.get(claims_path(ns) + "/bt"), p),
            "events": events}


def test_binding_timeout_from_the_config_as_kube_scheduler():
    """DynamicResourcesArgs.bindingTimeout from --config (10 s): the devices' conditions are
    not met in time, PreBind fails with the timeout, the next attempt finds the claim timed
    out (available on no node), PostFilter deallocates it, the second allocation's device is
    attached and the pod bound; the same events and end as kube-scheduler's."""
    c, _ = setup()
    for p in ("ks-t-", "gs-t-"):
        scenario_world(c, p, {"a": [bc_device("c0")]})
    pc = [{"name": "DynamicResources", "args": {"bindingTimeout": "10s"}}]
    _, _, ks, _ = run_scenario("default-scheduler", "ks-t-", make_bt, bt_settled, during=bt_driver(),
                               plugin_config=pc)
    _, ns, gs, sv = run_scenario("gpusched", "gs-t-", make_bt, bt_settled, during=bt_driver(),
                                 plugin_config=pc)
    try:
        util.check_eq(gs, ks, "the pod, its claim and its events, against kube-scheduler's")
        if not any("device binding timeout" in e[2] for e in ks["events"]):
            raise AssertionError("kube-scheduler's PreBind did not time out (the test's premise): %s" % ks["events"])
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")

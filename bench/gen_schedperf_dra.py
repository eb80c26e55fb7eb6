#!/usr/bin/env python3
"""Write one of kube-scheduler's scheduler_perf DRA workloads (v1.37.2) as manifests.

test/integration/scheduler_perf/dra/performance-config.yaml and its subdirectories
(extendedresource, devicetaints, prioritizedlist, partitionabledevices, consumablecapacity)
define the workloads over the templates in dra/templates/; this writes the objects their
operations create, deterministically, in the layout of bench/gen_schedperf.py:

  0-namespaces.json  the namespaces (init, test)
  1-nodes.json       node-with-dra-test-driver.yaml: scheduler-perf-dra-<i>, 4 cpu, 32Gi,
                     110 pods (allocatable = capacity, as the API server defaults it)
  2-objects.json     the ResourceSlices of each node, the DeviceClasses, DeviceTaintRules,
                     ResourceClaimTemplates and ResourceClaims
  3-init.json        the init pods, already bound (scheduler_perf has the scheduler place them
                     and does not time it; here both schedulers start from the same placement),
                     with their claims allocated and reserved for them
  4-measure.json     the measured pods (collectMetrics: true), pending

Claims that allocResourceClaims allocates (no pod) take the first free devices of a node
drawn at random (seeded), as that op does with a shuffled node list. Claims of bound init pods
take the first free devices of the pod's node (init pods go round-robin over the nodes).

scheduler_perf's generateName pods (pod-with-claim-template.yaml: "test-dra") are named
test-dra<index>. Where scheduler_perf has only a "fast" size or steady-state sizes (measured
by keeping 10 pods in flight for 10 s), a burst size of ours is used, named below: every
measured pod exists before the scheduler starts, as in the other benchmarks.

  python3 bench/gen_schedperf_dra.py WORKLOAD OUTDIR [--nodes N] [--init N] [--measure N]
  python3 bench/gen_schedperf_dra.py --list
"""
import argparse
import json
import os
import random
import sys
import uuid

DRIVER = "test-driver.cdi.k8s.io"
PAUSE = "registry.k8s.io/pause:3.10.1"


def node(i):
    name = "scheduler-perf-dra-%d" % i
    res = {"cpu": "4", "memory": "32Gi", "pods": "110"}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"node-with-dra": "true",
                                                   "kubernetes.io/hostname": name}},
            "spec": {},
            "status": {"capacity": dict(res), "allocatable": dict(res), "phase": "Running",
                       "conditions": [{"type": "Ready", "status": "True"}]}}


def basic_slice(i, num_devices=10, num_roots=2):
    """resourceslice-basic-devices.yaml"""
    devs = []
    for k in range(num_devices):
        r = k % num_roots
        devs.append({"name": "basic-device-%d" % k, "attributes": {
            "driver": {"string": "xe"}, "driverVersion": {"version": "1.2.3"},
            "resource.k8s.io/pciRoot": {"string": "%d" % r},
            "family": {"string": "Arc Pro B-Series"}, "health": {"string": "Healthy"},
            "model": {"string": "B60"}, "pciAddress": {"string": "0000:0%d:00.0" % k},
            "pciId": {"string": "0xe211"}, "pciRoot": {"string": "0%d" % r},
            "resource.kubernetes.io/pciBusID": {"string": "0000:0%d:00.0" % k},
            "resource.kubernetes.io/pciRoot": {"string": "pci0000:0%d" % r},
            "sriov": {"bool": True}, "type": {"string": "gpu"}},
            "capacity": {"memory": {"value": "24480Mi"}, "millicores": {"value": "1k"}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "resourceslice-%d" % i},
            "spec": {"pool": {"name": "resourceslice-%d" % i, "generation": 1, "resourceSliceCount": 1},
                     "driver": DRIVER, "nodeName": "scheduler-perf-dra-%d" % i, "devices": devs}}


def counter_slices(i, counter_sets, devices):
    pool = {"name": "resourceslice-%d" % i, "generation": 1, "resourceSliceCount": 2}
    spec = {"driver": DRIVER, "nodeName": "scheduler-perf-dra-%d" % i}
    return [{"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
             "metadata": {"name": "resourceslice-countersets-%d" % i},
             "spec": dict(spec, pool=dict(pool), sharedCounters=counter_sets)},
            {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
             "metadata": {"name": "resourceslice-devices-%d" % i},
             "spec": dict(spec, pool=dict(pool), devices=devices)}]


def partitionable_slices(i):
    """resourceslice-partitionable-{countersets,devices}.yaml"""
    cs = [{"name": "counter-set", "counters": {"counter%d" % k: {"value": "1"} for k in range(1, 5)}}]
    devs = [{"name": "device-1", "consumesCounters": [{"counterSet": "counter-set", "counters": {
                "counter1": {"value": "1"}, "counter2": {"value": "1"}}}]},
            {"name": "device-2", "consumesCounters": [{"counterSet": "counter-set", "counters": {
                "counter3": {"value": "1"}, "counter4": {"value": "1"}}}]}]
    return counter_slices(i, cs, devs)


def backtracking_slices(i):
    """resourceslice-partitionable-backtracking-{countersets,devices}.yaml"""
    cs = [{"name": "counter-set-for-cpu", "counters": {"cpu%d" % k: {"value": "1"} for k in range(1, 9)}},
          {"name": "counter-set-for-mem", "counters": {"mem": {"value": "70Gi"}}}]
    devs = [{"name": "device-%d" % k, "consumesCounters": [
        {"counterSet": "counter-set-for-cpu", "counters": {"cpu%d" % k: {"value": "1"}}},
        {"counterSet": "counter-set-for-mem", "counters": {"mem": {"value": "20Gi" if k == 1 else "10Gi"}}}]}
        for k in range(1, 9)]
    return counter_slices(i, cs, devs)


def consumable_slice(i):
    """resourceslice-consumablecapacity.yaml"""
    devs = []
    for k in range(4):
        devs.append({"name": "shareable-device-%d" % k, "allowMultipleAllocations": True,
                     "attributes": {"dra.example.com/index": {"int": k}},
                     "capacity": {"bandwidth": {"requestPolicy": {"default": "1M", "validRange": {"min": "1M", "step": "8"}},
                                                "value": "10Gi" if k == 2 else "10G"}}})
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
            "metadata": {"name": "resourceslice-%d" % i},
            "spec": {"pool": {"name": "resourceslice-%d" % i, "generation": 1, "resourceSliceCount": 1},
                     "driver": DRIVER, "nodeName": "scheduler-perf-dra-%d" % i, "devices": devs}}


def device_class(name="test-class", expr='device.driver == "test-driver.cdi.k8s.io"', ext=None):
    c = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": name},
         "spec": {"selectors": [{"cel": {"expression": expr}}]}}
    if ext:
        c["spec"]["extendedResourceName"] = ext
    return c


def exactly(count=None, **more):
    e = {"deviceClassName": "test-class"}
    if count:
        e["count"] = count
    e.update(more)
    return e


def claim_spec(requests, constraints=None):
    d = {"requests": requests}
    if constraints:
        d["constraints"] = constraints
    return {"devices": d}


def template(ns, spec, name="test-claim-template"):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
            "metadata": {"name": name, "namespace": ns}, "spec": {"spec": spec}}


def claim(ns, name, spec):
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
            "metadata": {"name": name, "namespace": ns}, "spec": spec}


def pod(ns, name, claims=None, template_name=None, resources=None, node_name=None, uid=None):
    c = {"image": PAUSE, "name": "pause"}
    spec = {"containers": [c]}
    if template_name or claims:
        c["resources"] = {"claims": [{"name": "resource"}]}
        rc = {"name": "resource"}
        if template_name:
            rc["resourceClaimTemplateName"] = template_name
        else:
            rc["resourceClaimName"] = claims
        spec["resourceClaims"] = [rc]
    if resources:
        c["resources"] = {"requests": dict(resources), "limits": dict(resources)}
    if node_name:
        spec["nodeName"] = node_name
    meta = {"name": name, "namespace": ns}
    if uid:
        meta["uid"] = uid
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


class Devices:
    """The devices of each node, for the allocations of init claims: free(node) gives them in
    slice order, take() marks them used."""

    def __init__(self, names_per_node):
        self.free = {i: list(names) for i, names in names_per_node.items()}

    def take(self, i, n):
        got = self.free[i][:n]
        self.free[i] = self.free[i][n:]
        return got


def allocation(node_i, request, devices, shares=None):
    results = []
    for d in devices:
        r = {"request": request, "driver": DRIVER, "pool": "resourceslice-%d" % node_i, "device": d}
        if shares:
            r["shareID"], r["consumedCapacity"] = shares()
        results.append(r)
    return {"devices": {"results": results},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [{
                "key": "metadata.name", "operator": "In", "values": ["scheduler-perf-dra-%d" % node_i]}]}]}}


def uid_of(rng):
    return str(uuid.UUID(int=rng.getrandbits(128), version=4))


def generate(name, p):
    rng = random.Random(1)
    n = p["nodes"]
    nodes = [node(i) for i in range(n)]
    ns = [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": x}} for x in ("init", "test")]
    objects, init, measure = [], [], []
    kind = WORKLOADS[name]["kind"]

    def alloc_claims(count, spec, request, per_claim, devs, pick=None):
        """allocResourceClaims: each claim on a random node with enough free devices"""
        for j in range(count):
            order = list(range(n))
            rng.shuffle(order)
            for i in order:
                if len(devs.free[i]) >= per_claim:
                    c = claim("init", "test-claim-%d" % j, spec)
                    got = pick(devs, i) if pick else devs.take(i, per_claim)
                    c["status"] = {"allocation": allocation(i, request, got)}
                    objects.append(c)
                    break
            else:
                raise SystemExit("gen_schedperf_dra: cannot allocate init claim %d" % j)

    def bound_with_claim(j, i, spec, request, per_claim, devs, shares=None):
        """init pod j on node i with its template claim allocated and reserved"""
        name, uid = "test-dra%d" % j, uid_of(rng)
        cname = "%s-resource-init" % name
        pd = pod("init", name, template_name="test-claim-template", node_name=nodes[i]["metadata"]["name"], uid=uid)
        pd["status"] = {"phase": "Running", "resourceClaimStatuses": [{"name": "resource", "resourceClaimName": cname}]}
        c = claim("init", cname, spec)
        c["metadata"]["annotations"] = {"resource.kubernetes.io/pod-claim-name": "resource"}
        c["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid, "controller": True}]
        c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
        got = devs(i) if callable(devs) else devs.take(i, per_claim)
        c["status"] = {"allocation": allocation(i, request, got, shares),
                       "reservedFor": [{"resource": "pods", "name": name, "uid": uid}]}
        init.append(pd)
        objects.append(c)

    basic = Devices({i: ["basic-device-%d" % k for k in range(10)] for i in range(n)})
    if kind in ("template", "firstavailable", "taints"):
        objects += [basic_slice(i) for i in range(n)]
        objects.append(device_class())
        if kind == "firstavailable":
            objects.append(device_class("no-devices-class", 'device.driver == "no-such-driver.cdi.k8s.io"'))
        spec = claim_spec([{"name": "req-0", "exactly": exactly()}])
        if kind == "taints":
            objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceTaintRule",
                            "metadata": {"name": "taint-all-devices"},
                            "spec": {"taint": {"key": "example.com/taint", "value": "tainted", "effect": "NoSchedule"}}})
            spec = claim_spec([{"name": "req-0", "exactly": exactly(
                tolerations=[{"key": "example.com/taint", "operator": "Exists"}])}])
            objects.append(template("init", spec))
            for j in range(p["init"]):
                bound_with_claim(j, j % n, spec, "req-0", 1, basic)
        else:
            alloc_claims(p["init"], claim_spec([{"name": "req-0", "exactly": exactly()}]), "req-0", 1, basic)
        if kind == "firstavailable":
            spec = claim_spec([{"name": "req-0", "firstAvailable": [
                {"name": "sub-0", "deviceClassName": "no-devices-class"},
                {"name": "sub-1", "deviceClassName": "test-class"}]}])
        objects.append(template("test", spec))
        measure = [pod("test", "test-dra%d" % j, template_name="test-claim-template") for j in range(p["measure"])]
    elif kind == "claim":
        objects += [basic_slice(i, num_devices=2) for i in range(n)]
        objects.append(device_class())
        devs = Devices({i: ["basic-device-0", "basic-device-1"] for i in range(n)})
        spec = claim_spec([{"name": "req-0", "exactly": exactly()}])
        # init: claim k shared by pods 5k..5k+4, all on the node its device is on
        for k in range(p["init"] // 5):
            i = k % n
            c = claim("init", "test-claim-%d" % k, spec)
            c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
            c["status"] = {"allocation": allocation(i, "req-0", devs.take(i, 1)), "reservedFor": []}
            for j in range(5 * k, 5 * k + 5):
                name, uid = "test-dra-%d" % j, uid_of(rng)
                init.append(pod("init", name, claims=c["metadata"]["name"], node_name=nodes[i]["metadata"]["name"], uid=uid))
                c["status"]["reservedFor"].append({"resource": "pods", "name": name, "uid": uid})
            objects.append(c)
        for k in range(p["measure"] // 5):
            objects.append(claim("test", "test-claim-%d" % k, spec))
        measure = [pod("test", "test-dra-%d" % j, claims="test-claim-%d" % (j // 5)) for j in range(p["measure"])]
    elif kind in ("explicit", "implicit"):
        objects += [basic_slice(i) for i in range(n)]
        classes = p["classes"]
        for k in range(classes):
            objects.append(device_class("test-class-%d" % k, ext="example.com/gpu-%d" % k if kind == "explicit" else None))
        res = (lambda j: "example.com/gpu-%d" % (j % classes)) if kind == "explicit" else \
            (lambda j: "deviceclass.resource.kubernetes.io/test-class-%d" % (j % classes))
        for j in range(p["init"]):
            i = j % n
            name, uid = "test-dra-%d" % j, uid_of(rng)
            pd = pod("init", name, resources={res(j): "1"}, node_name=nodes[i]["metadata"]["name"], uid=uid)
            cname = "%s-extended-resources-init" % name
            pd["status"] = {"phase": "Running", "extendedResourceClaimStatus": {
                "requestMappings": [{"containerName": "pause", "resourceName": res(j), "requestName": "container-0-request-0"}],
                "resourceClaimName": cname}}
            c = claim("init", cname, claim_spec([{"name": "container-0-request-0", "exactly": {
                "deviceClassName": "test-class-%d" % (j % classes), "allocationMode": "ExactCount", "count": 1}}]))
            c["metadata"]["annotations"] = {"resource.kubernetes.io/extended-resource-claim": "true"}
            c["metadata"]["ownerReferences"] = [{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid, "controller": True}]
            c["metadata"]["finalizers"] = ["resource.kubernetes.io/delete-protection"]
            c["status"] = {"allocation": allocation(i, "container-0-request-0", basic.take(i, 1)),
                           "reservedFor": [{"resource": "pods", "name": name, "uid": uid}]}
            init.append(pd)
            objects.append(c)
        measure = [pod("test", "test-dra-%d" % j, resources={res(j): "1"}) for j in range(p["measure"])]
    elif kind in ("partitionable", "backtracking"):
        for i in range(n):
            objects += (partitionable_slices if kind == "partitionable" else backtracking_slices)(i)
        objects.append(device_class())
        count = 2 if kind == "partitionable" else 7
        # the first solution: devices 1-2, and 2-8 for the backtracking one (device-1 takes
        # 20Gi of the 70Gi and 7 devices with it do not fit)
        names = {i: (["device-1", "device-2"] if kind == "partitionable" else ["device-%d" % k for k in range(2, 9)]) for i in range(n)}
        spec = claim_spec([{"name": "req-0", "exactly": exactly(count)}])
        alloc_claims(p["init"], spec, "req-0", count, Devices(names))
        objects.append(template("test", spec))
        measure = [pod("test", "test-dra%d" % j, template_name="test-claim-template") for j in range(p["measure"])]
    elif kind == "consumable":
        objects += [consumable_slice(i) for i in range(n)]
        objects.append(device_class(expr='device.driver == "test-driver.cdi.k8s.io" &&\ndevice.allowMultipleAllocations == true'))
        spec = claim_spec([{"name": "req-0", "exactly": exactly(2, capacity={"requests": {"bandwidth": "2500M"}})}],
                          [{"requests": ["req-0"], "distinctAttribute": "dra.example.com/index"}])
        objects.append(template("init", spec))
        objects.append(template("test", spec))
        per_node = {}

        def pick(i):
            k = per_node.get(i, 0)
            per_node[i] = k + 1
            a = (2 * k) % 4
            return ["shareable-device-%d" % a, "shareable-device-%d" % (a + 1)]
        shares = lambda: (uid_of(rng), {"bandwidth": "2500M"})  # noqa: E731
        # 8 pods per node on the first init/8 nodes (the "half" scenario)
        for j in range(p["init"]):
            bound_with_claim(j, j // 8, spec, "req-0", 2, pick, shares)
        measure = [pod("test", "test-dra%d" % j, template_name="test-claim-template") for j in range(p["measure"])]
    return ns, nodes, objects, init, measure


WORKLOADS = {
    "SchedulingWithResourceClaimTemplate": {
        "kind": "template", "size": "5000pods_500nodes",
        "params": {"nodes": 500, "init": 2500, "measure": 2500}},
    "SchedulingWithResourceClaim": {
        "kind": "claim", "size": "5000pods_500nodes",
        "params": {"nodes": 500, "init": 2500, "measure": 2500}},
    "ExtendedResource": {
        "kind": "explicit", "size": "Explicit_25classes_5000pods_500nodes",
        "params": {"nodes": 500, "init": 2500, "measure": 2500, "classes": 25}},
    "ExtendedResourceImplicit": {
        "kind": "implicit", "size": "Implicit_25classes_5000pods_500nodes",
        "params": {"nodes": 500, "init": 2500, "measure": 2500, "classes": 25}},
    # scheduler_perf has only "fast" (2 nodes, 10 pods): ours, the template workload's size
    "DeviceTaintToleration": {
        "kind": "taints", "size": "ours:5000pods_500nodes",
        "params": {"nodes": 500, "init": 2500, "measure": 2500}},
    "FirstAvailable": {
        "kind": "firstavailable", "size": "ours:5000pods_500nodes",
        "params": {"nodes": 500, "init": 2500, "measure": 2500}},
    # steady-state half_500nodes in scheduler_perf: ours fills the other half at once
    "Partitionable": {
        "kind": "partitionable", "size": "ours:half_500nodes_burst",
        "params": {"nodes": 500, "init": 250, "measure": 250}},
    "PartitionableBacktracking": {
        "kind": "backtracking", "size": "ours:half_500nodes_burst",
        "params": {"nodes": 500, "init": 250, "measure": 250}},
    "ConsumableCapacity": {
        "kind": "consumable", "size": "ours:half_500nodes_burst",
        "params": {"nodes": 500, "init": 2000, "measure": 2000}},
}


def lst(items):
    return {"apiVersion": "v1", "kind": "List", "items": items}


def write(outdir, parts):
    os.makedirs(outdir, exist_ok=True)
    for f in os.listdir(outdir):
        if f.endswith(".json"):
            os.unlink(os.path.join(outdir, f))
    for fname, items in zip(("0-namespaces.json", "1-nodes.json", "2-objects.json", "3-init.json",
                             "4-measure.json"), parts):
        if items:
            with open(os.path.join(outdir, fname), "w") as f:
                json.dump(lst(items), f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("workload", nargs="?")
    ap.add_argument("outdir", nargs="?")
    ap.add_argument("--list", action="store_true", help="print the workloads and their sizes")
    ap.add_argument("--nodes", type=int)
    ap.add_argument("--init", type=int)
    ap.add_argument("--measure", type=int)
    a = ap.parse_args()
    if a.list:
        for k, w in WORKLOADS.items():
            print("%-36s %-40s %s" % (k, w["size"], " ".join("%s=%d" % kv for kv in w["params"].items())))
        return 0
    if a.workload not in WORKLOADS or not a.outdir:
        ap.error("want WORKLOAD OUTDIR; workloads: " + ", ".join(WORKLOADS))
    params = dict(WORKLOADS[a.workload]["params"])
    for flag, key in ((a.nodes, "nodes"), (a.init, "init"), (a.measure, "measure")):
        if flag is not None:
            params[key] = flag
    write(a.outdir, generate(a.workload, params))
    return 0


if __name__ == "__main__":
    sys.exit(main())

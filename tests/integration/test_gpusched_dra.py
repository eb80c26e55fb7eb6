"""gpusched's answers on Dynamic Resource Allocation beyond simulate's: --kube-version's
warnings for fields an older release drops, explain's per-node reasons, nodes/report/capacity
with GPUs from ResourceSlices, and examples/dra/."""
import json
import os
import subprocess

import util

SCEN = os.path.join(util.SRC, "tests", "scenarios")
VERSIONED = os.path.join(SCEN, "dra-kube-version-1.37", "cluster.yaml")


def gpusched(*args, input=None):
    p = util.run([util.binary("gpusched")] + list(args), input=input)
    if p.returncode not in (0, 1, 2):
        raise AssertionError("gpusched %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def warnings(p):
    return [l for l in p.stderr.splitlines() if l.startswith("gpusched: warning: ")]


def test_kube_version_warns_of_dropped_fields():
    p = gpusched("simulate", "-f", VERSIONED, "--kube-version", "1.35", "-o", "json")
    util.check_eq(p.returncode, 0, "exit")
    w = warnings(p)
    want = [
        "gpusched: warning: DeviceTaintRule gpu-2-maintenance: DRADeviceTaintRules is off by "
        "default in kube-scheduler 1.35 (resource.k8s.io/v1 has no DeviceTaintRule): not read",
        "gpusched: warning: DeviceClass gpu.nvidia.com: spec.extendedResourceName "
        "(DRAExtendedResource) is off by default in kube-scheduler 1.35 (its API server drops "
        "the field): not read",
        "gpusched: warning: ResourceSlice gpu-1-gpu: taints (DRADeviceTaints) is off by default "
        "in kube-scheduler 1.35 (its API server drops the field): not read",
    ]
    util.check_eq(w, want, "1.35 warnings")
    p = gpusched("simulate", "-f", VERSIONED, "--kube-version", "1.36", "-o", "json")
    util.check_eq(len(warnings(p)), 1, "1.36 warnings: %r" % p.stderr)
    p = gpusched("simulate", "-f", VERSIONED, "-o", "json")
    util.check_eq(warnings(p), [], "1.37 warnings")


def test_kube_version_134_pools_and_counters():
    doc = """
apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: p1, generation: 1, resourceSliceCount: 2}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly:
        deviceClassName: gpu
        capacity: {requests: {memory: 1Gi}}
"""
    p = gpusched("simulate", "-f", "-", "--kube-version", "1.34", input=doc)
    w = warnings(p)
    util.check_eq(w, [
        "gpusched: warning: ResourceSlice s1: pool gpu.nvidia.com/p1 is incomplete "
        "(resourceSliceCount): kube-scheduler 1.34 treats such a pool otherwise than 1.35 (not "
        "modelled): the answer is 1.35's",
        "gpusched: warning: ResourceClaim default/c: capacity (DRAConsumableCapacity) is off by "
        "default in kube-scheduler 1.34 (its API server drops the field): read as written, so "
        "the answer may differ from 1.34's",
    ], "1.34 warnings")
    p = gpusched("simulate", "-f", "-", "--kube-version", "1.35", input=doc)
    util.check_eq(len(warnings(p)), 1, "1.35: the capacity request only: %r" % p.stderr)


# n1: four GPUs, one a T4 (the claim's selector wants M40s), one tainted by its driver, one
# held by another pod's claim; n2: a pool with one of its two slices; n3: two free M40s on
# different NUMA nodes, and the claim wants them on the same one
WHY = """apiVersion: v1
kind: Node
metadata: {name: n1, labels: {kubernetes.io/hostname: n1}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n2, labels: {kubernetes.io/hostname: n2}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: n3, labels: {kubernetes.io/hostname: n3}}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n1-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: n1, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {productName: {string: Tesla-T4}}}
  - name: gpu-1
    attributes: {productName: {string: Tesla-M40}}
    taints: [{key: gpu.nvidia.com/xid, value: "79", effect: NoSchedule}]
  - {name: gpu-2, attributes: {productName: {string: Tesla-M40}}}
  - {name: gpu-3, attributes: {productName: {string: Tesla-M40}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n2-gpus-a}
spec:
  driver: gpu.nvidia.com
  nodeName: n2
  pool: {name: n2, generation: 1, resourceSliceCount: 2}
  devices:
  - {name: gpu-0, attributes: {productName: {string: Tesla-M40}}}
  - {name: gpu-1, attributes: {productName: {string: Tesla-M40}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: n3-gpus}
spec:
  driver: gpu.nvidia.com
  nodeName: n3
  pool: {name: n3, generation: 1, resourceSliceCount: 1}
  devices:
  - {name: gpu-0, attributes: {productName: {string: Tesla-M40}, numa: {int: 0}}}
  - {name: gpu-1, attributes: {productName: {string: Tesla-M40}, numa: {int: 1}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: held, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly: {deviceClassName: gpu.nvidia.com}
status:
  allocation:
    devices:
      results:
      - {request: gpu, driver: gpu.nvidia.com, pool: n1, device: gpu-2}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields: [{key: metadata.name, operator: In, values: [n1]}]
  reservedFor:
  - {resource: pods, name: holder, uid: uid-holder}
---
apiVersion: v1
kind: Pod
metadata: {name: holder, namespace: default, uid: uid-holder}
spec:
  nodeName: n1
  resourceClaims: [{name: gpu, resourceClaimName: held}]
  containers:
  - {name: c, image: x, resources: {claims: [{name: gpu}]}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: two-m40, namespace: default}
spec:
  spec:
    devices:
      requests:
      - name: gpus
        exactly:
          deviceClassName: gpu.nvidia.com
          count: 2
          selectors:
          - cel: {expression: 'device.attributes["gpu.nvidia.com"].productName == "Tesla-M40"'}
      constraints:
      - {matchAttribute: gpu.nvidia.com/numa}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer, namespace: default}
spec:
  resourceClaims: [{name: gpus, resourceClaimTemplateName: two-m40}]
  containers:
  - {name: c, image: tensorflow, resources: {claims: [{name: gpus}]}}
"""


def test_explain_says_why_no_devices():
    p = gpusched("explain", "-f", "-", "trainer", input=WHY)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    out = p.stdout
    sec = out[out.index("Devices (DynamicResources could not allocate the claims):"):]
    sec = sec[:sec.index("\nFailedScheduling")]
    claim = [l for l in out.splitlines() if "claim default/trainer-gpus-" in l][0]
    name = claim[claim.index("default/trainer-gpus-"):].split(",")[0]
    want = """Devices (DynamicResources could not allocate the claims):
  n1:
    claim NAME, request gpus wants 2 devices of class gpu.nvidia.com: 3 of 4 devices match (1 fails the request's selector #0 (device.attributes["gpu.nvidia.com"].productName == "Tesla-M40")), 1 free
      1 allocated: gpu.nvidia.com/n1/gpu-2 to default/held (pod default/holder)
      1 tainted (not tolerated): gpu.nvidia.com/n1/gpu-1 (gpu.nvidia.com/xid=79:NoSchedule)
  n2:
    pool gpu.nvidia.com/n2 is incomplete (resourceSliceCount: some of its ResourceSlices are missing): none of its devices is used
    no complete, valid pool of devices is visible from this node
  n3:
    claim NAME, request gpus wants 2 devices of class gpu.nvidia.com: 2 of 2 devices match, 2 free
    the constraint #0 of claim NAME (matchAttribute gpu.nvidia.com/numa) cannot be met: without it the devices would be found
""".replace("NAME", name)
    util.check_eq(sec, want, "explain's devices section")
    # the same in JSON, per node
    p = gpusched("explain", "-f", "-", "trainer", "-o", "json", input=WHY)
    doc = json.loads(p.stdout)
    by = {n["node"]: n for n in doc["nodes"]}
    util.check_eq(by["n2"]["devices"], [l.strip() for l in want.splitlines()[6:8]], "n2 devices")
    util.check_eq(by["n1"]["reasons"], ["cannot allocate all claims"], "n1 reasons")
    util.check_eq(len(by["n1"]["devices"]), 3, "n1 devices")


def test_explain_seed_walkthrough_names_the_holders():
    p = gpusched("explain", "-f", os.path.join(SCEN, "dra-seed-walkthrough", "cluster.yaml"), "late")
    util.check_eq(p.returncode, 0, "exit")
    lines = p.stdout.splitlines()
    i = lines.index("  gpu-1:")
    util.check_eq(lines[i + 1], "    the pod's extended-resource claim, request container-0-request-0 "
                  "wants 1 device of class gpu.nvidia.com: 2 of 2 devices match, 0 free", "gpu-1")
    if not (lines[i + 2].startswith("      2 allocated: gpu.nvidia.com/gpu-1/gpu-0 to "
                                    "default/tf-claim-gpu-") and
            "(pod default/tf-claim), gpu.nvidia.com/gpu-1/gpu-1 to "
            "default/tf-notebook-extended-resources-" in lines[i + 2] and
            lines[i + 2].endswith("(pod default/tf-notebook)")):
        raise AssertionError("holders: %r" % lines[i + 2])
    util.check_eq(lines[lines.index("  cpu-1:") + 1],
                  "    no ResourceSlice publishes devices this node can use", "cpu-1")


def test_explain_without_dra_failure_has_no_devices_section():
    p = gpusched("explain", "-f", os.path.join(SCEN, "dra-seed-walkthrough", "cluster.yaml"),
                 "tf-claim")
    util.check_eq(p.returncode, 0, "exit")
    if "cpu-1     DynamicResources   cannot allocate all claims" not in p.stdout:
        raise AssertionError("tf-claim on cpu-1: %s" % p.stdout)


EXAMPLE = os.path.join(util.SRC, "examples", "dra")
M40 = ["cn-beijing.i-2ze8o1a45qdv5q8a7luz", "cn-beijing.i-2ze8o1a45qdv5q8a7lv0"]


def test_nodes_shows_dra_gpus():
    p = gpusched("nodes", "-f", EXAMPLE, "-o", "wide")
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    rows = {l.split()[0]: l.split() for l in p.stdout.splitlines()[1:]}
    for n in M40:
        # NAME STATUS ROLES GPU-NAME GPU-COUNT GPU-MEM GPU-FREE GPU-SOURCE GPU-ALLOCATABLE ...
        util.check_eq(rows[n][3:9], ["Tesla-M40", "1", "12209Mi", "1", "dra", "0"], n)
    p = gpusched("nodes", "-f", EXAMPLE, "-o", "json")
    items = {i["metadata"]["name"]: i for i in json.loads(p.stdout)["items"]}
    util.check_eq(items[M40[0]]["gpusched"]["draGPUs"],
                  {"product": "Tesla-M40", "count": 1, "allocated": 0, "memory": "12209Mi"}, "json")
    util.check_eq(items[M40[0]]["gpusched"]["gpu"]["source"], "dra", "json source")
    # a device another pod's claim holds is not free; a node whose kubelet has nvidia.com/gpu
    # keeps its labels as the source
    p = gpusched("nodes", "-f", "-", input=WHY)
    rows = {l.split()[0]: l.split() for l in p.stdout.splitlines()[1:]}
    util.check_eq(rows["n1"][3:7], ["Tesla-T4,Tesla-M40", "4", "<none>", "3"], "n1")
    p = gpusched("nodes", "-f", os.path.join(util.SRC, "examples", "seed"), "-o", "wide")
    if " dra " in p.stdout or "aliyun" not in p.stdout:
        raise AssertionError("seed's sources: %s" % p.stdout)


def test_report_counts_dra_gpus():
    p = gpusched("report", "-f", "-", input=WHY)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    for want in ['<p id="summary">8 nvidia.com/gpu on 3 nodes: 1 used, 7 free.',
                 '<p id="dra">8 of these GPUs are devices of DRA ResourceSlices (Dynamic Resource '
                 'Allocation): 1 held by allocated claims, 7 free.</p>',
                 '<tr><td>n1</td><td class="n">4</td><td class="n">1</td><td class="n">3</td>'
                 '<td class="n">4 (1 held)</td>',
                 '<h3 class="model">Tesla-M40 &mdash; 2 nodes, 4 GPUs, 0 used, 4 free</h3>']:
        if want not in p.stdout:
            raise AssertionError("report: %r not in\n%s" % (want, p.stdout))


def test_capacity_for_a_claim_template():
    p = gpusched("capacity", "-f", EXAMPLE, "-o", "json")
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    specs = {s["pod"].rsplit("-", 2)[0] if "claim" in s["pod"] else s["pod"]: s
             for s in json.loads(p.stdout)["specs"]}
    claim = specs["default/tf-notebook-claim"]
    # one copy per M40 node: each copy's claim from the template takes that node's GPU
    util.check_eq(claim["copies"], 2, "claim copies")
    util.check_eq(sorted(n["node"] for n in claim["nodes"]), M40, "claim nodes")
    # and then no GPU is left for the extended-resource pod
    ext = [s for s in json.loads(p.stdout)["specs"] if s["pod"].startswith("default/tf-notebook-cf")]
    util.check_eq(ext[0]["copies"], 0, "tf-notebook copies")
    # copies of a pod served through extendedResourceName hold their devices too
    p = gpusched("capacity", "-f", os.path.join(EXAMPLE, "cluster.yaml"), "-f",
                 os.path.join(EXAMPLE, "deviceclass.yaml"), "-f",
                 os.path.join(EXAMPLE, "slices.yaml"), "-f", os.path.join(EXAMPLE, "tf-notebook.yaml"))
    first = p.stdout.splitlines()[0]
    util.check_eq(first, "default/tf-notebook-cf47b76f-wbqtp: 2 more copies fit (1 nvidia.com/gpu each)",
                  "extended copies")
    p = gpusched("capacity", "-f", "-", input=WHY)
    if "(each with claim gpus from template two-m40)" not in p.stdout.splitlines()[0]:
        raise AssertionError("template line: %s" % p.stdout)


def test_example_readme_shows_current_output():
    """examples/dra/README.md's transcripts are what the commands print now."""
    readme = open(os.path.join(EXAMPLE, "README.md")).read()
    for args in (["nodes", "-f", "examples/dra/", "-l", "aliyun.accelerator/nvidia_name=Tesla-M40"],
                 ["simulate", "-f", "examples/dra/"],
                 ["simulate", "-f", "examples/dra/", "-o", "json"]):
        p = subprocess.run([util.binary("gpusched")] + args, capture_output=True, text=True,
                           cwd=util.SRC, timeout=60)
        util.check_eq(p.returncode, 0, " ".join(args))
        if "$ gpusched %s\n%s" % (" ".join(args), p.stdout) not in readme:
            raise AssertionError("examples/dra/README.md: the output of gpusched %s changed:\n%s"
                                 % (" ".join(args), p.stdout))


def test_make_demo_runs_the_dra_edition():
    p = subprocess.run(["sh", os.path.join(util.SRC, "examples", "demo.sh"), util.BUILD],
                       capture_output=True, text=True, timeout=120)
    util.check_eq(p.returncode, 0, "demo.sh: %s" % p.stderr)
    for want in ("$ gpusched simulate -f examples/dra/ -o json",
                 '"request":"container-0-request-0","driver":"gpu.nvidia.com"',
                 "Devices (DynamicResources could not allocate the claims):"):
        if want not in p.stdout:
            raise AssertionError("demo: %r missing" % want)


INVALID = """apiVersion: v1
kind: Node
metadata: {name: n1}
status: {allocatable: {cpu: "8", memory: 16Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu}
spec:
  selectors: [{cel: {expression: 'device.driver == "gpu.nvidia.com"'}}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s1}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: p1, generation: 1, resourceSliceCount: 2}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: s2}
spec:
  driver: gpu.nvidia.com
  nodeName: n1
  pool: {name: p1, generation: 1, resourceSliceCount: 2}
  devices: [{name: gpu-0}]
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: c, namespace: default}
spec:
  devices:
    requests:
    - name: r
      exactly: {deviceClassName: gpu}
---
apiVersion: v1
kind: Pod
metadata: {name: p, namespace: default}
spec:
  resourceClaims: [{name: r, resourceClaimName: c}]
  containers: [{name: c, image: x, resources: {claims: [{name: r}]}}]
"""


def test_explain_names_an_invalid_pool():
    p = gpusched("explain", "-f", "-", "p", input=INVALID)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    lines = p.stdout.splitlines()
    i = lines.index("Devices (DynamicResources could not allocate the claims):")
    util.check_eq(lines[i + 1:i + 4], [
        "  n1:",
        "    pool gpu.nvidia.com/p1 is invalid: duplicate device name gpu-0",
        "    no complete, valid pool of devices is visible from this node"], "invalid pool")
    if "1 invalid resource pools were encountered" not in p.stdout:
        raise AssertionError(p.stdout)


def test_claim_named_twice_message_quotes_the_uid_as_json():
    """The Duplicate value of a pod naming an allocated claim twice is the API server's JSON of
    the reservation (Go's encoding/json: <, > and & as \\u00XX); a pod from a file without a
    uid has the one gpusched makes up for it, where the API server would make up another."""
    with open(os.path.join(SCEN, "dra-claim-named-twice", "cluster.yaml")) as f:
        doc = f.read()
    uid = "uid: 7a1ce000-0000-4000-8000-000000000003"
    assert uid in doc
    for new, want in (('uid: "q\\"<&>\\tz"', '"uid":"q\\"\\u003c\\u0026\\u003e\\tz"'),
                      ("name: x", '"uid":"gpusched-uid:default/twice-again"')):
        text = doc.replace(uid, new).replace("{name: twice-again, namespace: default, name: x}",
                                             "{name: twice-again, namespace: default}")
        p = gpusched("simulate", "-f", "-", "-o", "json", input=text)
        util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
        msgs = {u["pod"]: u["message"] for u in json.loads(p.stdout)["unschedulable"]}
        util.check_eq(msgs["default/twice-again"],
                      'running PreBind plugin "DynamicResources": add reservation to claim '
                      'default/shared: ResourceClaim.resource.k8s.io "shared" is invalid: '
                      'status.reservedFor[2]: Duplicate value: {"resource":"pods",'
                      '"name":"twice-again",%s}' % want, "message")


BINDING = os.path.join(SCEN, "dra-binding-failed-or-timeout", "cluster.yaml")


def test_explain_says_why_a_claim_is_unavailable():
    """A claim whose devices' binding failed or timed out: explain names the condition's reason
    and message, or the timeout; the claim allocated on another node says so."""
    p = gpusched("explain", "-f", BINDING, "first")
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    if ("  gpu-a:\n    claim default/failed: device binding failed: claim=failed, reason=FabricDown, "
            "message=\"link \\\"nvlink-3\\\" is down\"; PostFilter deallocates it when no node fits\n") not in p.stdout:
        raise AssertionError("first: %s" % p.stdout)
    p = gpusched("explain", "-f", BINDING, "second", "-o", "json")
    by = {n["node"]: n for n in json.loads(p.stdout)["nodes"]}
    util.check_eq(by["gpu-a"]["reasons"], ["resourceclaim not available on the node"], "gpu-a reasons")
    util.check_eq(by["gpu-a"]["devices"], [
        "claim default/timed-out: its devices' binding conditions were not met within bindingTimeout "
        "600s of its allocation (2020-01-01T00:00:00Z); PostFilter deallocates it when no node fits"],
        "gpu-a devices")


def test_binding_timeout_per_profile():
    """DynamicResourcesArgs.bindingTimeout is each profile's: a claim allocated 5 minutes ago
    whose binding conditions are not met has timed out under a profile's 60 s (deallocated,
    allocated afresh: gpu-0) and not under the default 600 s (kept: gpu-1)."""
    import datetime
    import tempfile
    ts = (datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%SZ")
    doc = open(BINDING).read().replace('"2020-01-01T00:00:00Z"', '"%s"' % ts)
    cfg = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
- schedulerName: quick
  pluginConfig:
  - name: DynamicResources
    args: {bindingTimeout: 60s}
"""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scheduler.conf")
        with open(path, "w") as f:
            f.write(cfg)
        for sched, want in (("default-scheduler", "gpu-2"), ("quick", "gpu-1")):
            text = doc.replace("kind: Pod\nmetadata: {name: second, namespace: default}\nspec:\n",
                               "kind: Pod\nmetadata: {name: second, namespace: default}\nspec:\n"
                               "  schedulerName: %s\n" % sched)
            p = gpusched("simulate", "-f", "-", "--config", path, "-o", "json", input=text)
            util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
            got = {s["pod"]: s["claims"][0]["device"] for s in json.loads(p.stdout)["scheduled"]}
            util.check_eq(got.get("default/second"), want, "second's device under %s" % sched)


def test_kube_version_135_does_not_check_binding():
    """Before 1.36 DRADeviceBindingConditions is off: the API server drops the results'
    bindingConditions and Filter checks nothing (a warning says so); the claims keep their
    devices."""
    p = gpusched("simulate", "-f", BINDING, "--kube-version", "1.35", "-o", "json")
    util.check_eq(p.returncode, 0, "exit")
    util.check_eq(len(warnings(p)), 3, "warnings: %r" % p.stderr)
    if "status.allocation.devices.results[].bindingConditions (DRADeviceBindingConditions)" not in p.stderr:
        raise AssertionError(p.stderr)
    got = [s["claims"][0]["device"] for s in json.loads(p.stdout)["scheduled"]]
    util.check_eq(got, ["gpu-1", "gpu-2", "gpu-3"], "devices under 1.35")


def test_gpu_profile_warns_when_no_class_serves_nvidia_gpu():
    """GPUPlacement counts DRA GPUs through the DeviceClass serving nvidia.com/gpu: with GPUs
    in slices and no such class (or a release that maps no extended resource), --profile gpu
    warns once, for every command that scores with it; the default profile does not."""
    claim = [a for f in sorted(os.listdir(os.path.join(SCEN, "dra-claim"))) if f.endswith(".yaml")
             for a in ("-f", os.path.join(SCEN, "dra-claim", f))]
    want = ["gpusched: warning: ResourceSlice gpu-a-gpu publishes GPUs, but no DeviceClass serves "
            "nvidia.com/gpu (extendedResourceName): GPUPlacement counts the device plugin's "
            "nvidia.com/gpu only (docs/scheduling.md, \"GPU-aware profile\")"]
    p = gpusched("simulate", *claim, "--profile", "gpu", "-o", "json")
    util.check_eq((p.returncode, warnings(p)), (0, want), "simulate --profile gpu")
    p = gpusched("explain", *claim, "--profile", "gpu", "train")
    util.check_eq(warnings(p), want, "explain --profile gpu (once)")
    p = gpusched("simulate", *claim, "-o", "json")
    util.check_eq(warnings(p), [], "simulate, default profile")
    binpack = os.path.join(SCEN, "gpu-profile-dra-binpack", "cluster.yaml")
    p = gpusched("simulate", "-f", binpack, "--profile", "gpu", "-o", "json")
    util.check_eq(warnings(p), [], "a class serves nvidia.com/gpu")
    p = gpusched("simulate", "-f", VERSIONED, "--profile", "gpu", "--kube-version", "1.35", "-o", "json")
    util.check_eq(warnings(p)[-1:], [want[0].replace("gpu-a-gpu", "gpu-1-gpu")], "1.35 maps none")
    p = gpusched("simulate", "-f", VERSIONED, "--profile", "gpu", "-o", "json")
    util.check_eq([w for w in warnings(p) if "GPUPlacement" in w], [], "1.37 maps it")


# Devices with binding conditions (DRADeviceBindingConditions): all but gpu-1. Claim "attach"
# is allocated in the run (gpu-0: nothing reports its conditions yet); claim "pending" is
# allocated on gpu-2 with one of its two conditions True, claim "nostatus" on gpu-4 with no
# status.devices entry; claim "ready" on gpu-3 with its condition True; claim "plain" gets
# gpu-1.
PENDING = """apiVersion: v1
kind: Node
metadata: {name: gpu-a, labels: {kubernetes.io/hostname: gpu-a}}
status:
  allocatable: {cpu: "8", memory: 16Gi, pods: "110"}
  capacity: {cpu: "8", memory: 16Gi, pods: "110"}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.nvidia.com}
spec:
  selectors:
  - cel: {expression: 'device.driver == "gpu.nvidia.com"'}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: gpu-a-gpu}
spec:
  driver: gpu.nvidia.com
  nodeName: gpu-a
  pool: {name: gpu-a, generation: 1, resourceSliceCount: 1}
  devices:
  - name: gpu-0
    attributes: {kind: {string: attach}}
    bindingConditions: [example.com/attached, example.com/ready]
    bindingFailureConditions: [example.com/attach-failed]
  - name: gpu-1
    attributes: {kind: {string: plain}}
  - name: gpu-2
    attributes: {kind: {string: pending}}
    bindingConditions: [example.com/attached, example.com/ready]
    bindingFailureConditions: [example.com/attach-failed]
  - name: gpu-3
    attributes: {kind: {string: ready}}
    bindingConditions: [example.com/attached]
    bindingFailureConditions: [example.com/attach-failed]
  - name: gpu-4
    attributes: {kind: {string: nostatus}}
    bindingConditions: [example.com/attached]
    bindingFailureConditions: [example.com/attach-failed]
"""
for _kind in ("attach", "plain"):
    PENDING += """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: %s, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
        selectors:
        - cel: {expression: 'device.attributes["gpu.nvidia.com"].kind == "%s"'}
""" % (_kind, _kind)
for _kind, _dev, _conds, _status in (("pending", "gpu-2", "[example.com/attached, example.com/ready]",
                                      (("example.com/attached", "True"), ("example.com/ready", "False"))),
                                     ("ready", "gpu-3", "[example.com/attached]",
                                      (("example.com/attached", "True"),)),
                                     ("nostatus", "gpu-4", "[example.com/attached]", ())):
    PENDING += """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: %s, namespace: default}
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.nvidia.com
status:
  allocation:
    allocationTimestamp: "2099-01-01T00:00:00Z"
    devices:
      results:
      - {request: gpu, driver: gpu.nvidia.com, pool: gpu-a, device: %s, bindingConditions: %s,
         bindingFailureConditions: [example.com/attach-failed]}
    nodeSelector:
      nodeSelectorTerms:
      - matchFields:
        - {key: metadata.name, operator: In, values: [gpu-a]}
""" % (_kind, _dev, _conds)
    if _status:
        PENDING += """  devices:
  - driver: gpu.nvidia.com
    pool: gpu-a
    device: %s
    conditions:
""" % _dev
    for _t, _s in _status:
        PENDING += ("    - {type: %s, status: \"%s\", reason: R, message: \"\", "
                    "lastTransitionTime: \"2026-01-01T00:00:00Z\"}\n" % (_t, _s))
for _kind in ("attach", "plain", "pending", "ready", "nostatus"):
    PENDING += """---
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: default}
spec:
  resourceClaims: [{name: gpu, resourceClaimName: %s}]
  containers:
  - {name: c, image: pytorch, resources: {claims: [{name: gpu}]}}
""" % (_kind, _kind)


def binding_warning(pod, devices, cmd, timeout="600s"):
    return ("pod default/%s: binding conditions of its devices are not met yet (%s): "
            "kube-scheduler binds the pod only once the driver sets them True (PreBind waits "
            "up to bindingTimeout %s, then fails the attempt); %s assumes they are met"
            % (pod, devices, timeout, cmd))


def test_binding_conditions_pending_warn():
    """A pod placed on devices whose binding conditions are not met (allocated in the run, or
    an input claim's with one still False or not reported) gets a warning on stderr, and in -o json's
    "warnings": kube-scheduler's PreBind would wait for them before the bind. Conditions all
    True, or a device without any: none. The placements stay as they were."""
    want = [binding_warning("attach", "gpu.nvidia.com/gpu-a/gpu-0: example.com/attached, "
                            "example.com/ready", "simulate"),
            binding_warning("pending", "gpu.nvidia.com/gpu-a/gpu-2: example.com/ready", "simulate"),
            binding_warning("nostatus", "gpu.nvidia.com/gpu-a/gpu-4: example.com/attached",
                            "simulate")]
    p = gpusched("simulate", "-f", "-", "-o", "json", input=PENDING)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    util.check_eq(warnings(p), ["gpusched: warning: " + w for w in want], "stderr")
    doc = json.loads(p.stdout)
    util.check_eq(doc.get("warnings"), want, "-o json warnings")
    util.check_eq({s["pod"]: s["claims"][0]["device"] for s in doc["scheduled"]},
                  {"default/attach": "gpu-0", "default/plain": "gpu-1", "default/pending": "gpu-2",
                   "default/ready": "gpu-3", "default/nostatus": "gpu-4"}, "placements")
    # the table: the warnings on stderr only
    p = gpusched("simulate", "-f", "-", input=PENDING)
    util.check_eq(warnings(p), ["gpusched: warning: " + w for w in want], "table's stderr")
    if "warning" in p.stdout:
        raise AssertionError("stdout: %s" % p.stdout)
    # explain: the pod explained only
    p = gpusched("explain", "-f", "-", "attach", "-o", "json", input=PENDING)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    w = want[0].replace("simulate assumes", "explain assumes")
    util.check_eq(warnings(p), ["gpusched: warning: " + w], "explain attach")
    util.check_eq(json.loads(p.stdout)["warnings"], [w], "explain -o json warnings")
    for pod in ("plain", "ready"):
        p = gpusched("explain", "-f", "-", pod, input=PENDING)
        util.check_eq((p.returncode, warnings(p)), (0, []), "explain %s" % pod)


def test_binding_conditions_warning_follows_the_profile_and_release():
    """The warning names the pod's profile's bindingTimeout; before 1.36 (the gates off)
    PreBind waits for nothing: no warning; nor when no device has binding conditions."""
    import tempfile
    cfg = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
profiles:
- schedulerName: default-scheduler
  pluginConfig:
  - name: DynamicResources
    args: {bindingTimeout: 90s}
"""
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "scheduler.conf")
        with open(path, "w") as f:
            f.write(cfg)
        p = gpusched("simulate", "-f", "-", "--config", path, "-o", "json", input=PENDING)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    util.check_eq(json.loads(p.stdout)["warnings"][1],
                  binding_warning("pending", "gpu.nvidia.com/gpu-a/gpu-2: example.com/ready",
                                  "simulate", "90s"), "bindingTimeout 90s")
    p = gpusched("simulate", "-f", "-", "--kube-version", "1.35", "-o", "json", input=PENDING)
    util.check_eq(p.returncode, 0, "exit: %s" % p.stderr)
    if [w for w in warnings(p) if "binding conditions of its devices" in w]:
        raise AssertionError("1.35: %s" % p.stderr)
    p = gpusched("simulate", "-f", BINDING, "-o", "json")
    util.check_eq((p.returncode, warnings(p)), (0, []), "no device with binding conditions")
    util.check_eq("warnings" in json.loads(p.stdout), False, "no warnings key")

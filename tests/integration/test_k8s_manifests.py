"""Every manifest we ship or show, against the real kube-apiserver (k8s_util): each file in
deploy/ and examples/ passes `kubectl apply --server-side --dry-run=server` (the API server's
own validation, defaulting and admission, nothing stored), then is created for real and
does what it says with the real controllers (the Deployments' pods, the DaemonSet only on GPU
nodes). The RBAC of both ServiceAccounts is checked verb by verb against least privilege.
A directory holding a Chart.yaml (a Helm chart) is not a set of manifests and is left out."""
import json
import os

import k8s_util
import util

# where the objects of a directory go when they name no namespace: the two example sets have
# the same names (tf-notebook, not-in-gpu-node), so each gets its own
NAMESPACES = {"examples/seed": "seed-example", "deploy/gpusched/examples": "gpusched-example"}
_tmp = k8s_util.tmpdir("k8s-manifests-tmp-")


def manifest_files():
    out = []
    for top in ("deploy", "examples"):
        for d, dirs, files in os.walk(os.path.join(util.SRC, top)):
            if "Chart.yaml" in files:
                dirs[:] = []
                continue
            dirs.sort()
            for f in sorted(files):
                if f.endswith((".yaml", ".yml", ".json")):
                    out.append(os.path.relpath(os.path.join(d, f), util.SRC))
    return out


def ns_args(path):
    ns = NAMESPACES.get(os.path.dirname(path))
    return ["-n", ns] if ns else []


def c():
    cl = k8s_util.cluster("manifests")
    for ns in NAMESPACES.values():
        if not cl.get_or_none("/api/v1/namespaces/" + ns):
            cl.kubectl("create", "namespace", ns)
    return cl


def dry_run(path):
    def case():
        cl = c()
        out = cl.kubectl("apply", "--server-side", "--dry-run=server", "-f",
                         os.path.join(util.SRC, path), *ns_args(path))
        if "serverside-applied (server dry run)" not in out:
            raise AssertionError("kubectl apply --dry-run=server said %r" % out)
        p = cl.kubectl("get", "-f", os.path.join(util.SRC, path), *ns_args(path), check=False)
        if p.returncode == 0 or "NotFound" not in p.stderr:
            raise AssertionError("a server dry run stored objects: %s %s" % (p.stdout, p.stderr))
    return case


def create(path):
    def case():
        cl = c()
        cl.kubectl("apply", "--server-side", "-f", os.path.join(util.SRC, path), *ns_args(path))
        got = json.loads(cl.kubectl("get", "-f", os.path.join(util.SRC, path), *ns_args(path), "-o", "json"))
        items = got["items"] if got.get("kind") == "List" else [got]
        want = cl.objects(path)
        util.check_eq(sorted((o["kind"], o["metadata"]["name"]) for o in items),
                      sorted((o["kind"], o["metadata"]["name"]) for o in want), "objects stored")
    return case


_created = []


def created():
    """The cluster with every manifest applied (as the create/ cases do; applying again is a
    no-op), so each test below also runs alone (-k)."""
    cl = c()
    if not _created:
        for f in creation_order(manifest_files()):
            cl.kubectl("apply", "--server-side", "-f", os.path.join(util.SRC, f), *ns_args(f))
        _created.append(True)
    return cl


def creation_order(files):
    # RBAC before what uses it, nodes before the workloads
    return sorted(files, key=lambda f: (0 if "rbac" in f else 1 if "cluster" in f else 2, f))


def cases():
    files = manifest_files()
    for must in ("deploy/gpulabel/daemonset.yaml", "deploy/gpulabel/rbac.yaml", "deploy/gpusched/rbac.yaml",
                 "deploy/gpusched/deployment.yaml", "examples/seed/cluster.yaml",
                 "deploy/gpusched/examples/tf-notebook.yaml"):
        if must not in files:
            raise AssertionError("%s is not among the manifests found: %s" % (must, files))
    for f in files:
        yield "dry_run_server/" + f, dry_run(f)
    for f in creation_order(files):
        yield "create/" + f, create(f)


# ---- what the created objects do with the real controllers --------------------------------

def test_deployments_get_their_pods_from_the_real_controllers():
    cl = created()
    for ns, sched in (("seed-example", "default-scheduler"), ("gpusched-example", "gpusched")):
        pods = k8s_util.wait_for("tf-notebook's pod in " + ns, lambda: cl.pods(ns, "app=tf-notebook"))
        util.check_eq(len(pods), 1, "tf-notebook pods in " + ns)
        spec = pods[0]["spec"]
        util.check_eq((spec["schedulerName"], spec["nodeSelector"]),
                      (sched, {"aliyun.accelerator/nvidia_name": "Tesla-M40"}), "the pod's scheduling fields")
    pods = k8s_util.wait_for("gpusched's two replicas", lambda: len(
        cl.pods("kube-system", "app.kubernetes.io/name=gpusched")) == 2 and
        cl.pods("kube-system", "app.kubernetes.io/name=gpusched"))
    for p in pods:
        util.check_eq((p["spec"]["serviceAccountName"], p["spec"]["priority"]),
                      ("gpusched", 2000000000), "a gpusched replica's ServiceAccount and priority")


def test_daemonset_runs_only_on_gpu_nodes():
    cl = created()
    gpu = "cn-beijing.i-2ze8o1a45qdv5q8a7luz"
    worker = "cn-beijing.i-2zej9s0zijykp9pwf7lu"
    ds_path = "/apis/apps/v1/namespaces/kube-system/daemonsets/gpulabel"
    k8s_util.wait_for("the DaemonSet's status", lambda: cl.get(ds_path).get("status", {}).get(
        "observedGeneration"))
    util.check_eq(cl.get(ds_path)["status"]["desiredNumberScheduled"], 0,
                  "gpulabel pods wanted before any node is marked as a GPU node")
    # the GPU operator's label (one of the three the DaemonSet selects on)
    cl.patch("/api/v1/nodes/" + gpu, {"metadata": {"labels": {"nvidia.com/gpu.present": "true"}}}, "merge")
    pods = k8s_util.wait_for("a gpulabel pod for " + gpu, lambda: cl.pods(
        "kube-system", "app.kubernetes.io/name=gpulabel"))
    util.check_eq(len(pods), 1, "gpulabel pods")
    terms = pods[0]["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
        "nodeSelectorTerms"]
    fields = [t.get("matchFields") for t in terms]
    util.check_eq(fields[0], [{"key": "metadata.name", "operator": "In", "values": [gpu]}],
                  "the pod is pinned to the GPU node")
    util.check_eq(pods[0]["spec"]["serviceAccountName"], "gpulabel", "the pod's ServiceAccount")
    # the node's own labels on a GPU-less worker do not pull the agent there
    cl.patch("/api/v1/nodes/" + worker, {"metadata": {"labels": {"gpulabel.io/gpu-node": "false"}}}, "merge")
    util.check_eq(len(cl.pods("kube-system", "app.kubernetes.io/name=gpulabel")), 1, "gpulabel pods")


def test_gpusched_nodes_reads_what_kubectl_get_prints():
    cl = created()
    path = os.path.join(_tmp, "nodes.yaml")
    with open(path, "w") as f:
        f.write(cl.kubectl("get", "nodes", "-o", "yaml"))
    sel = "aliyun.accelerator/nvidia_name=Tesla-M40"
    p = util.run([util.binary("gpusched"), "nodes", "-f", path, "-l", sel, "-o", "name"])
    util.check_eq(p.returncode, 0, "gpusched nodes exit status (stderr: %s)" % p.stderr)
    util.check_eq(p.stdout, cl.kubectl("get", "nodes", "-l", sel, "-o", "name"),
                  "gpusched nodes -o name, against kubectl get nodes -o name")


# ---- least privilege ------------------------------------------------------------------------

GPULABEL = "system:serviceaccount:kube-system:gpulabel"
GPUSCHED = "system:serviceaccount:kube-system:gpusched"
RBAC = [
    # (who, verb, resource, namespace or None, allowed)
    (GPULABEL, "get", "nodes", None, True),
    (GPULABEL, "patch", "nodes", None, True),
    (GPULABEL, "list", "nodes", None, False),
    (GPULABEL, "watch", "nodes", None, False),
    (GPULABEL, "update", "nodes", None, False),
    (GPULABEL, "delete", "nodes", None, False),
    (GPULABEL, "patch", "nodes/status", None, False),
    (GPULABEL, "get", "pods", "default", False),
    (GPULABEL, "create", "events", "default", True),
    # Node events live in "default": a Role there, not a ClusterRole
    (GPULABEL, "create", "events", "kube-system", False),
    (GPULABEL, "create", "events", "team-a", False),
    (GPULABEL, "delete", "events", "default", False),
    (GPULABEL, "get", "secrets", "kube-system", False),
    # DRA mode (dra.yaml): its node's pool and the claims it prepares; no get or watch of slices
    (GPULABEL, "list", "resourceslices.resource.k8s.io", None, True),
    (GPULABEL, "create", "resourceslices.resource.k8s.io", None, True),
    (GPULABEL, "update", "resourceslices.resource.k8s.io", None, True),
    (GPULABEL, "delete", "resourceslices.resource.k8s.io", None, True),
    (GPULABEL, "get", "resourceslices.resource.k8s.io", None, False),
    (GPULABEL, "watch", "resourceslices.resource.k8s.io", None, False),
    (GPULABEL, "patch", "resourceslices.resource.k8s.io", None, False),
    (GPULABEL, "get", "resourceclaims.resource.k8s.io", "default", True),
    (GPULABEL, "list", "resourceclaims.resource.k8s.io", "default", False),
    (GPULABEL, "update", "resourceclaims.resource.k8s.io/status", "default", False),
    (GPULABEL, "create", "deviceclasses.resource.k8s.io", None, False),
    (GPUSCHED, "list", "pods", None, True),
    (GPUSCHED, "watch", "pods", None, True),
    (GPUSCHED, "delete", "pods", "default", True),
    (GPUSCHED, "create", "pods/binding", "default", True),
    (GPUSCHED, "patch", "pods/status", "default", True),
    (GPUSCHED, "list", "nodes", None, True),
    (GPUSCHED, "watch", "nodes", None, True),
    (GPUSCHED, "create", "events.events.k8s.io", "default", True),
    (GPUSCHED, "patch", "events.events.k8s.io", "default", True),
    # verbs serve never sends: no get of pods or nodes, no update, no core Events
    (GPUSCHED, "list", "deviceclasses.resource.k8s.io", None, True),
    (GPUSCHED, "watch", "resourceslices.resource.k8s.io", None, True),
    (GPUSCHED, "watch", "resourceclaimtemplates.resource.k8s.io", None, True),
    (GPUSCHED, "list", "devicetaintrules.resource.k8s.io", None, True),
    (GPUSCHED, "get", "resourceclaims.resource.k8s.io", "default", True),
    (GPUSCHED, "watch", "resourceclaims.resource.k8s.io", None, True),
    (GPUSCHED, "patch", "resourceclaims.resource.k8s.io", "default", True),
    (GPUSCHED, "update", "resourceclaims.resource.k8s.io/binding", "default", True),
    (GPUSCHED, "patch", "resourceclaims.resource.k8s.io/binding", "default", True),
    (GPUSCHED, "update", "resourceclaims.resource.k8s.io/status", "default", True),
    (GPUSCHED, "patch", "resourceclaims.resource.k8s.io/status", "default", True),
    (GPUSCHED, "create", "resourceclaims.resource.k8s.io", "default", True),
    (GPUSCHED, "delete", "resourceclaims.resource.k8s.io", "default", True),
    (GPUSCHED, "update", "resourceclaims.resource.k8s.io", "default", False),
    (GPUSCHED, "create", "resourceslices.resource.k8s.io", None, False),
    (GPUSCHED, "get", "deviceclasses.resource.k8s.io", None, False),
    (GPUSCHED, "get", "pods", "default", False),
    (GPUSCHED, "update", "pods/status", "default", False),
    (GPUSCHED, "get", "nodes", None, False),
    (GPUSCHED, "create", "events", "default", False),
    (GPUSCHED, "update", "events.events.k8s.io", "default", False),
    # the secure port's delegated authentication and authorization
    (GPUSCHED, "create", "tokenreviews.authentication.k8s.io", None, True),
    (GPUSCHED, "create", "subjectaccessreviews.authorization.k8s.io", None, True),
    (GPULABEL, "create", "tokenreviews.authentication.k8s.io", None, False),
    (GPUSCHED, "create", "leases.coordination.k8s.io", "kube-system", True),
    (GPUSCHED, "update", "leases.coordination.k8s.io/gpusched", "kube-system", True),
    # PodTopologySpread's system defaults: the Services and controllers that select a pod
    (GPUSCHED, "list", "services", None, True),
    (GPUSCHED, "watch", "services", None, True),
    (GPUSCHED, "list", "replicationcontrollers", None, True),
    (GPUSCHED, "watch", "replicationcontrollers", None, True),
    (GPUSCHED, "list", "replicasets.apps", None, True),
    (GPUSCHED, "watch", "replicasets.apps", None, True),
    (GPUSCHED, "list", "statefulsets.apps", None, True),
    (GPUSCHED, "watch", "statefulsets.apps", None, True),
    (GPUSCHED, "get", "services", "default", False),
    (GPUSCHED, "update", "services", "default", False),
    (GPUSCHED, "get", "replicasets.apps", "default", False),
    (GPUSCHED, "patch", "statefulsets.apps", "default", False),
    (GPUSCHED, "list", "deployments.apps", None, False),
    (GPUSCHED, "list", "endpoints", None, False),
    (GPUSCHED, "create", "pods", "default", False),
    (GPUSCHED, "update", "pods", "default", False),
    (GPUSCHED, "patch", "nodes", None, False),
    (GPUSCHED, "update", "leases.coordination.k8s.io/kube-scheduler", "kube-system", False),
    (GPUSCHED, "create", "leases.coordination.k8s.io", "default", False),
    (GPUSCHED, "get", "secrets", "kube-system", False),
    (GPUSCHED, "list", "configmaps", "kube-system", False),
]


def test_rbac_is_least_privilege():
    cl = created()
    wrong = []
    for who, verb, res, ns, allowed in RBAC:
        # TYPE/NAME names an object; a subresource takes --subresource
        kind, _, sub = res.partition("/")
        if kind.startswith("leases"):
            kind, sub = res, ""
        args = ["auth", "can-i", verb, kind, "--as", who] + (["--subresource", sub] if sub else [])
        namespaced = ("pods", "services", "replicationcontrollers", "replicasets.apps", "statefulsets.apps",
                      "deployments.apps", "endpoints")
        args += ["-n", ns] if ns else ["--all-namespaces"] if kind in namespaced else []
        p = cl.kubectl(*args, check=False)
        got = p.stdout.strip() == "yes"
        if got != allowed:
            wrong.append("%s %s %s%s: %s" % (who.rsplit(":", 1)[1], verb, res, " -n " + ns if ns else "",
                                              p.stdout.strip() or p.stderr.strip()))
    util.check_eq(wrong, [], "answers of kubectl auth can-i that differ from least privilege")

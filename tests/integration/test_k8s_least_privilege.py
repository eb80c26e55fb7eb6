"""The privileges of gpulabel and gpusched as deploy/ ships them, refused where they end, on
the real kube-apiserver (a local control plane, k8s_util; docs/security.md):

- gpulabel's token, bound to a pod on gpu-1 (as the DaemonSet's projected token is), labels
  gpu-1; the ValidatingAdmissionPolicy of deploy/gpulabel/admission-policy.yaml refuses a patch
  of gpu-2, a foreign label, a foreign annotation or a spec change on gpu-1, any patch with a
  token that names no node, and an Event about another Node; RBAC refuses Events outside the
  namespace "default";
- (gpusched's ClusterRole, the verbs serve sends and no other: test_k8s_manifests.py's RBAC
  table, and the serve suites run serve with it.)"""
import http.client
import json
import os
import ssl
import subprocess
import urllib.parse

import k8s_util
import util

NS, SA = "kube-system", "gpulabel"
M40 = 'driver=550.107.02\ncuda=12040\ndevice name="Tesla M40" memory=12802064384 cc=5.2\n'
_tmp = k8s_util.tmpdir("k8s-privilege-tmp-")
_setup = {}


def setup():
    """gpu-1 and gpu-2, deploy/gpulabel/ and deploy/gpusched/rbac.yaml applied, a pod of
    gpulabel's ServiceAccount on gpu-1, and kubeconfigs: `bound` holds a token bound to that
    pod (so to gpu-1), `unbound` a plain TokenRequest token."""
    if not _setup:
        c = k8s_util.cluster("privilege")
        for f in ("deploy/gpulabel/rbac.yaml", "deploy/gpulabel/admission-policy.yaml",
                  "deploy/gpusched/rbac.yaml"):
            c.apply_file(f)
        for n in ("gpu-1", "gpu-2"):
            c.create_node(k8s_util.gpu_node(n, labels={"team.example.com/owner": "ml"}))
        c.create("/api/v1/namespaces/%s/pods" % NS, {
            "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "agent"},
            "spec": {"serviceAccountName": SA, "nodeName": "gpu-1",
                     "containers": [{"name": "c", "image": "gpulabel:0.1"}]}})
        bound = c.kubectl("create", "token", SA, "-n", NS, "--duration", "1h",
                          "--bound-object-kind", "Pod", "--bound-object-name", "agent").strip()
        _setup.update(c=c, bound_token=bound,
                      bound=c.write_kubeconfig(os.path.join(_tmp, "kc-bound"), token=bound),
                      unbound_token=c.token(NS, SA),
                      nvml=os.path.join(_tmp, "m40.nvml"))
        _setup["unbound"] = c.write_kubeconfig(os.path.join(_tmp, "kc-unbound"),
                                               token=_setup["unbound_token"])
        with open(_setup["nvml"], "w") as f:
            f.write(M40)
        # the API server enforces a policy once its informers have it: wait until a dry-run
        # patch of gpu-2 is refused
        k8s_util.wait_for("the admission policy to be in force", lambda: as_token(
            bound, "PATCH", "/api/v1/nodes/gpu-2?dryRun=All", {"metadata": {"labels": {"a": "b"}}})[0] == 403)
        k8s_util.wait_for("the events policy to be in force", lambda: as_token(
            bound, "POST", "/api/v1/namespaces/default/events?dryRun=All", event("default", "gpu-2"),
            "application/json")[0] == 403)
    return _setup


def oneshot(node, kubeconfig):
    s = setup()
    e = {k: v for k, v in os.environ.items()
         if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG")}
    e["FAKE_NVML_CONFIG"] = s["nvml"]
    return subprocess.run([util.binary("gpulabel"), "--oneshot", "--kubeconfig", kubeconfig,
                           "--node-name", node, "--nvml-lib", util.fake_nvml(), "--timeout", "10s"],
                          capture_output=True, text=True, timeout=60, env=e)


def as_token(token, method, path, body, content_type="application/merge-patch+json"):
    """(status, Status or object) of one request with a bearer token."""
    c = k8s_util.cluster("privilege")
    u = urllib.parse.urlsplit(c.server)
    conn = http.client.HTTPSConnection(u.hostname, u.port, timeout=30,
                                       context=ssl.create_default_context(cafile=c.ca_file))
    try:
        conn.request(method, path, body=json.dumps(body),
                     headers={"Authorization": "Bearer " + token, "Content-Type": content_type})
        r = conn.getresponse()
        return r.status, json.loads(r.read() or b"null")
    finally:
        conn.close()


def refused(status_body, want):
    st, body = status_body
    if st != 403 or want not in (body or {}).get("message", ""):
        raise AssertionError("want 403 %r, got %d %r" % (want, st, body))


def labels(node):
    return setup()["c"].get("/api/v1/nodes/" + node)["metadata"].get("labels") or {}


def test_gpulabel_labels_its_own_node():
    p = oneshot("gpu-1", setup()["bound"])
    util.check_eq(p.returncode, 0, "exit status (stderr %r)" % p.stderr)
    util.check_eq(labels("gpu-1").get("aliyun.accelerator/nvidia_name"), "Tesla-M40", "gpu-1 labelled")


def test_gpulabel_cannot_patch_another_node():
    p = oneshot("gpu-2", setup()["bound"])
    util.check_eq(p.returncode, 1, "exit status")
    if "gpulabel may patch only the Node its pod runs on (gpu-1), not gpu-2" not in p.stderr:
        raise AssertionError("stderr: %r" % p.stderr)
    util.check_eq(labels("gpu-2"), {"kubernetes.io/hostname": "gpu-2", "kubernetes.io/os": "linux",
                                    "kubernetes.io/arch": "amd64", "team.example.com/owner": "ml"},
                  "gpu-2's labels")


def test_only_its_own_keys_on_its_own_node():
    tok = setup()["bound_token"]
    path = "/api/v1/nodes/gpu-1"
    refused(as_token(tok, "PATCH", path, {"metadata": {"labels": {"team.example.com/owner": None}}}),
            "gpulabel may change only its own label keys, not team.example.com/owner")
    refused(as_token(tok, "PATCH", path, {"metadata": {"labels": {"node-role.kubernetes.io/x": ""}}}),
            "not node-role.kubernetes.io/x")
    refused(as_token(tok, "PATCH", path, {"metadata": {"annotations": {"example.com/a": "b"}}}),
            "gpulabel may change only its annotation gpulabel.io/owned-labels, not example.com/a")
    refused(as_token(tok, "PATCH", path, {"spec": {"unschedulable": True}}),
            "gpulabel may not change a Node's spec")
    refused(as_token(tok, "PATCH", path, {"spec": {"taints": [{"key": "x", "effect": "NoSchedule"}]}}),
            "gpulabel may not change a Node's spec")
    st, _ = as_token(tok, "PATCH", path, {"metadata": {"labels": {"nvidia.com/gpu.present": "true"}}})
    util.check_eq(st, 200, "one of its own keys")


def test_a_token_that_names_no_node_changes_nothing():
    p = oneshot("gpu-1", setup()["unbound"])
    util.check_eq(p.returncode, 1, "exit status")
    if "this token names no node" not in p.stderr:
        raise AssertionError("stderr: %r" % p.stderr)


def event(ns, node):
    return {"apiVersion": "v1", "kind": "Event", "metadata": {"generateName": "gpulabel-", "namespace": ns},
            "involvedObject": {"apiVersion": "v1", "kind": "Node", "name": node, "uid": node},
            "reason": "GPUUnhealthy", "message": "test", "type": "Warning",
            "source": {"component": "gpulabel", "host": node}}


def test_events_only_about_its_node_and_only_in_default():
    tok = setup()["bound_token"]
    st, body = as_token(tok, "POST", "/api/v1/namespaces/default/events", event("default", "gpu-1"),
                        "application/json")
    util.check_eq(st, 201, "an event about its own node (%r)" % body)
    refused(as_token(tok, "POST", "/api/v1/namespaces/default/events", event("default", "gpu-2"),
                     "application/json"),
            "gpulabel may report events only about the Node its pod runs on (gpu-1)")
    refused(as_token(tok, "POST", "/api/v1/namespaces/kube-system/events", event("kube-system", "gpu-1"),
                     "application/json"),
            'cannot create resource "events" in API group "" in the namespace "kube-system"')

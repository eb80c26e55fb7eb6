"""The Helm chart deploy/helm/gpulabel with the real helm (build/k8s/helm, helm.sh/helm/v4 built
by `make k8s` from tests/k8s/go.mod) and the real kube-apiserver (k8s_util): `helm lint
--strict`, `helm template` with the default values and with others, each rendering applied with
`kubectl apply --server-side --dry-run=server` (the API server's validation, defaulting and
admission; nothing stored). The values are checked to change what is rendered, and the
defaults to render the pods of deploy/gpulabel/ and deploy/gpusched/."""
import json
import os

import k8s_util
import util

CHART = os.path.join(util.SRC, "deploy", "helm", "gpulabel")
HELM = os.path.join(k8s_util.K8S, "helm")
SKIP = None if os.access(HELM, os.X_OK) else "%s is not built (make k8s)" % HELM
_tmp = k8s_util.tmpdir("k8s-helm-tmp-")


def helm(*args, check=True):
    # helm's cache, config and data directories in this module's own place
    env = {k: v for k, v in os.environ.items() if k != "KUBECONFIG"}
    env.update(HOME=_tmp, HELM_CACHE_HOME=os.path.join(_tmp, "cache"),
               HELM_CONFIG_HOME=os.path.join(_tmp, "config"), HELM_DATA_HOME=os.path.join(_tmp, "data"))
    p = util.run([HELM] + list(args), env=env)
    if check and p.returncode != 0:
        raise AssertionError("helm %s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr.strip()))
    return p


_n = [0]


def values_file(values):
    _n[0] += 1
    path = os.path.join(_tmp, "values-%d.json" % _n[0])  # JSON is YAML
    with open(path, "w") as f:
        json.dump(values, f)
    return path


def render(values=None, release="gpulabel", namespace="kube-system"):
    """helm template's output (YAML text) with these values over the chart's, for a release
    in namespace (helm -n; deploy/'s manifests use kube-system)."""
    args = ["template", release, CHART, "-n", namespace]
    if values is not None:
        args += ["-f", values_file(values)]
    return helm(*args).stdout


def c():
    cl = k8s_util.cluster("helm")
    if not cl.get_or_none("/api/v1/namespaces/gpu-system"):
        cl.kubectl("create", "namespace", "gpu-system")
    return cl


def parse(text):
    """The objects of YAML text, as dicts (kubectl parses it: no YAML module in the test Python)."""
    out = c().kubectl("create", "--dry-run=client", "-o", "json", "-f", "-", input=text)
    dec, objs, i = json.JSONDecoder(), [], 0
    while True:
        while i < len(out) and out[i].isspace():
            i += 1
        if i == len(out):
            return objs
        obj, i = dec.raw_decode(out, i)
        objs.extend(obj["items"] if obj.get("kind") == "List" else [obj])


def objects(values=None, namespace="kube-system"):
    return parse(render(values, namespace=namespace))


def find(objs, kind, name=None):
    got = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    if len(got) > 1:
        raise AssertionError("%d objects %s %s" % (len(got), kind, name or ""))
    return got[0] if got else None


def kinds(objs):
    return sorted((o["kind"], o["metadata"]["name"], o["metadata"].get("namespace", "")) for o in objs)


def pod(objs, kind):
    return find(objs, kind)["spec"]["template"]["spec"]


def env(spec, container=0):
    return {e["name"]: e.get("value") for e in spec["containers"][container].get("env", [])}


def dry_run_server(text):
    out = c().kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=text)
    lines = [l for l in out.splitlines() if l.strip()]
    bad = [l for l in lines if not l.endswith("serverside-applied (server dry run)")]
    if bad or not lines:
        raise AssertionError("kubectl apply --dry-run=server said %r" % out)
    return len(lines)


# values that change every knob; what each does is asserted below
OTHER = {
    "image": {"repository": "registry.example.com/gpu/gpulabel", "tag": "0.2", "pullPolicy": "Always"},
    "imagePullSecrets": [{"name": "regcred"}],
    "gpulabel": {
        "schemas": ["ack", "gfd"],
        "migStrategy": "mixed",
        "runtimeClassName": "",
        "tolerations": [{"key": "gpu", "operator": "Equal", "value": "a100", "effect": "NoExecute"}],
        "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "pool", "operator": "In", "values": ["gpu"]}]}]}},
        "resources": {"requests": {"cpu": "20m", "memory": "32Mi"}, "limits": {"memory": "96Mi"}},
        "devicePlugin": {"enabled": False},
        "metricsPort": 0,
        "loggingFormat": "json",
    },
    "gpusched": {"profile": "default", "replicas": 1, "schedulerName": "gpu-scheduler",
                 "loggingFormat": "json",
                 # values merge into the chart's: null removes a default (the memory limit)
                 "resources": {"requests": {"cpu": "50m", "memory": "48Mi"}, "limits": None}},
}


# ---- lint and the API server ----------------------------------------------------------------

def test_helm_is_the_pinned_version():
    out = helm("version", "--short").stdout
    if not out.startswith("v4.3.2"):
        raise AssertionError("helm version --short: %r (want v4.3.2, tests/k8s/go.mod)" % out)


def test_lint_strict_default_and_other_values():
    for values in (None, OTHER, {"gpusched": {"enabled": False}}, {"gpulabel": {"enabled": False}},
                   {"gpulabel": {"mode": "auto"}}):
        args = ["lint", "--strict", CHART] + (["-f", values_file(values)] if values else [])
        p = helm(*args)
        if "1 chart(s) linted, 0 chart(s) failed" not in p.stdout:
            raise AssertionError("helm lint: %s" % p.stdout)


def test_default_rendering_passes_server_dry_run():
    util.check_eq(dry_run_server(render()), 17, "objects applied by the server dry run")
    p = c().kubectl("get", "daemonset/gpulabel", "-n", "kube-system", check=False)
    if p.returncode == 0 or "NotFound" not in p.stderr:
        raise AssertionError("a server dry run stored objects: %s %s" % (p.stdout, p.stderr))


def test_other_values_pass_server_dry_run():
    util.check_eq(dry_run_server(render(OTHER, namespace="gpu-system")), 16,
                  "objects applied by the server dry run")
    for values in ({"gpusched": {"enabled": False}}, {"gpulabel": {"enabled": False}},
                   {"gpusched": {"leaderElect": False}}, {"namePrefix": "b-", "gpulabel": {
                       "createRuntimeClass": False}}):
        dry_run_server(render(values))


# ---- the defaults are deploy/'s objects -------------------------------------------------------

def drop_dra_label(spec):
    """spec's required node terms without the expressions on nvidia.com/gpu.deploy.dra-driver"""
    for t in spec["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"][
            "nodeSelectorTerms"]:
        t["matchExpressions"] = [e for e in t["matchExpressions"] if e["key"] != "nvidia.com/gpu.deploy.dra-driver"]


def test_defaults_render_the_objects_of_deploy():
    objs = objects()
    want = []
    for f in ("deploy/gpulabel/daemonset.yaml", "deploy/gpulabel/rbac.yaml",
              "deploy/gpulabel/admission-policy.yaml",
              "deploy/gpusched/deployment.yaml", "deploy/gpusched/rbac.yaml"):
        want += c().objects(f)
    util.check_eq(kinds(objs), kinds(want), "objects rendered with the default values")
    for o in objs:
        w = find(want, o["kind"], o["metadata"]["name"])
        for field in ("rules", "roleRef", "subjects", "handler") + (
                ("spec",) if o["kind"].startswith("ValidatingAdmissionPolicy") else ()):
            util.check_eq(o.get(field), w.get(field), "%s %s: %s" % (o["kind"], o["metadata"]["name"], field))
    for kind in ("DaemonSet", "Deployment"):
        got, exp = pod(objs, kind), pod(want, kind)
        # the chart says more in the environment (GPULABEL_V, ...) and its pod labels carry
        # the release; the rest is the same pod
        util.check_eq(len(got["containers"]), len(exp["containers"]), "%s: containers" % kind)
        for i in range(len(exp["containers"])):
            missing = {k: v for k, v in env(exp, i).items() if env(got, i).get(k) != v}
            util.check_eq(missing, {}, "%s: deploy/'s environment not in the chart's (container %d)"
                          % (kind, i))
        if kind == "DaemonSet":
            # deploy/ leaves the nodes labelled nvidia.com/gpu.deploy.dra-driver=true to dra.yaml's
            # gpulabel-dra, as the chart's mode auto does; its default mode (device-plugin) has
            # no DRA DaemonSet to leave them to
            drop_dra_label(exp)
        for s in (got, exp):
            for ctr in s["containers"]:
                ctr.pop("env", None)
            sel = s.get("affinity", {}).get("podAntiAffinity")
            if sel:
                sel["preferredDuringSchedulingIgnoredDuringExecution"][0]["podAffinityTerm"][
                    "labelSelector"]["matchLabels"].pop("app.kubernetes.io/instance", None)
        util.check_eq(got, exp, "%s: the pod spec against deploy/" % kind)
    ds = find(objs, "DaemonSet")
    util.check_eq(ds["spec"]["selector"]["matchLabels"],
                  {"app.kubernetes.io/name": "gpulabel", "app.kubernetes.io/instance": "gpulabel"},
                  "the DaemonSet's selector")
    util.check_eq(ds["metadata"]["labels"]["app.kubernetes.io/managed-by"], "Helm", "managed-by")


# ---- each value changes what is rendered -----------------------------------------------------

def test_device_plugin_off_removes_its_container_and_mount():
    on, off = pod(objects(), "DaemonSet"), pod(objects({"gpulabel": {"devicePlugin": {"enabled": False}}}), "DaemonSet")
    util.check_eq([v["name"] for v in on["volumes"]], ["device-plugins", "serviceaccount"], "volumes, plugin on")
    util.check_eq([v["name"] for v in off["volumes"]], ["serviceaccount"], "volumes, plugin off")
    util.check_eq([c["name"] for c in on["containers"]], ["gpulabel", "device-plugin"], "containers, plugin on")
    util.check_eq([c["name"] for c in off["containers"]], ["gpulabel"], "containers, plugin off")
    util.check_eq([m["mountPath"] for m in off["containers"][0]["volumeMounts"]],
                  ["/var/run/secrets/kubernetes.io/serviceaccount"], "mounts, plugin off")
    util.check_eq(env(on)["GPULABEL_DEVICE_PLUGIN"], "false", "the labeller never serves the kubelet")
    util.check_eq(env(on, 1)["GPULABEL_NO_SYNC"], "true", "the plugin never talks to the API")
    util.check_eq(sorted(k for k in env(off) if k.startswith(("GPULABEL_RESOURCE", "GPULABEL_REPLICAS",
                                                               "GPULABEL_DEVICE_"))),
                  ["GPULABEL_DEVICE_PLUGIN"], "device-plugin settings left with the plugin off")
    dp = pod(objects({"gpulabel": {"devicePlugin": {"dir": "/var/lib/k0s/kubelet/device-plugins",
                                                      "replicas": 4, "resourceName": "example.com/gpu"}}}),
             "DaemonSet")
    util.check_eq((dp["volumes"][0]["hostPath"]["path"], dp["containers"][1]["volumeMounts"][0]["mountPath"],
                   env(dp, 1)["GPULABEL_DEVICE_PLUGIN_DIR"], env(dp, 1)["GPULABEL_REPLICAS"],
                   env(dp, 1)["GPULABEL_RESOURCE_NAME"]),
                  ("/var/lib/k0s/kubelet/device-plugins",) * 3 + ("4", "example.com/gpu"),
                  "the device-plugin directory, replicas and resource")


def test_gpusched_off_removes_its_objects():
    objs = objects({"gpusched": {"enabled": False}})
    util.check_eq(kinds(objs), [("ClusterRole", "gpulabel", ""), ("ClusterRoleBinding", "gpulabel", ""),
                                ("DaemonSet", "gpulabel", "kube-system"),
                                ("Role", "gpulabel-events", "default"),
                                ("RoleBinding", "gpulabel-events", "default"),
                                ("RuntimeClass", "nvidia", ""),
                                ("ServiceAccount", "gpulabel", "kube-system"),
                                ("ValidatingAdmissionPolicy", "gpulabel-own-node", ""),
                                ("ValidatingAdmissionPolicy", "gpulabel-own-node-events", ""),
                                ("ValidatingAdmissionPolicyBinding", "gpulabel-own-node", ""),
                                ("ValidatingAdmissionPolicyBinding", "gpulabel-own-node-events", "")],
                  "objects with gpusched off")
    objs = objects({"gpulabel": {"enabled": False}})
    util.check_eq(sorted({k for k, _, _ in kinds(objs)}), ["ClusterRole", "ClusterRoleBinding", "Deployment",
                                                             "Role", "RoleBinding", "ServiceAccount"],
                  "kinds with gpulabel off")
    util.check_eq({n for _, n, _ in kinds(objs)}, {"gpusched", "gpusched-leader-election"}, "names, gpulabel off")


def test_other_values_change_every_knob():
    objs = objects(OTHER, namespace="gpu-system")
    util.check_eq({ns for _, _, ns in kinds(objs)}, {"", "gpu-system", "default"},
                  "namespaces (the events Role's is where Node events go)")
    util.check_eq(find(objs, "RuntimeClass"), None, "a RuntimeClass with runtimeClassName empty")
    ds = pod(objs, "DaemonSet")
    util.check_eq(ds.get("runtimeClassName"), None, "runtimeClassName")
    util.check_eq(ds["tolerations"], OTHER["gpulabel"]["tolerations"], "tolerations")
    util.check_eq(ds["affinity"]["nodeAffinity"], OTHER["gpulabel"]["nodeAffinity"], "node affinity")
    ctr = ds["containers"][0]
    util.check_eq(ctr["resources"], OTHER["gpulabel"]["resources"], "resources")
    util.check_eq((ctr["image"], ctr["imagePullPolicy"], ds["imagePullSecrets"]),
                  ("registry.example.com/gpu/gpulabel:0.2", "Always", [{"name": "regcred"}]), "image")
    util.check_eq((env(ds)["GPULABEL_SCHEMA"], env(ds)["GPULABEL_MIG_STRATEGY"]), ("ack,gfd", "mixed"),
                  "schemas and MIG strategy")
    util.check_eq((ctr.get("ports"), ctr.get("livenessProbe"), "GPULABEL_METRICS_ADDR" in env(ds)),
                  (None, None, False), "metrics with metricsPort 0")
    crb = find(objs, "ClusterRoleBinding", "gpulabel")
    util.check_eq(crb["subjects"][0]["namespace"], "gpu-system", "the binding's ServiceAccount namespace")
    vap = find(objs, "ValidatingAdmissionPolicy", "gpulabel-own-node")
    util.check_eq(vap["spec"]["matchConditions"][0]["expression"],
                  "request.userInfo.username == 'system:serviceaccount:gpu-system:gpulabel'",
                  "the policy's ServiceAccount")
    sched = pod(objs, "Deployment")
    args = sched["containers"][0]["args"]
    util.check_eq(env(ds).get("GPULABEL_LOGGING_FORMAT"), "json", "gpulabel's logging format")
    for a in ("--profile=default", "--scheduler-name=gpu-scheduler", "--leader-elect-resource-name=gpu-scheduler",
              "--leader-elect-resource-namespace=gpu-system", "--logging-format=json"):
        if a not in args:
            raise AssertionError("%s not in gpusched's args %s" % (a, args))
    util.check_eq(find(objs, "Deployment")["spec"]["replicas"], 1, "gpusched replicas")
    util.check_eq(find(objs, "Role", "gpusched-leader-election")["rules"][1]["resourceNames"], ["gpu-scheduler"],
                  "the Lease's name")
    util.check_eq(sched["containers"][0]["resources"], {"requests": {"cpu": "50m", "memory": "48Mi"}},
                  "gpusched resources")
    default = pod(objects(), "Deployment")["containers"][0]["args"]
    util.check_eq([a for a in default if a.startswith("--profile")], ["--profile=gpu"], "the default profile")
    util.check_eq([a for a in default if a.startswith("--logging-format")], [], "text logs by default")


def same_pod(got, exp, what):
    """got (the chart's pod spec) is exp (deploy/'s) but for the chart's extra environment"""
    util.check_eq(len(got["containers"]), len(exp["containers"]), "%s: containers" % what)
    for i in range(len(exp["containers"])):
        missing = {k: v for k, v in env(exp, i).items() if env(got, i).get(k) != v}
        util.check_eq(missing, {}, "%s: deploy/'s environment not in the chart's (container %d)" % (what, i))
    got, exp = json.loads(json.dumps(got)), json.loads(json.dumps(exp))
    for s in (got, exp):
        for ctr in s["containers"]:
            ctr.pop("env", None)
    util.check_eq(got, exp, "%s: the pod spec against deploy/" % what)


def test_dra_mode_renders_its_objects_and_pod():
    # gpulabel.mode dra: deploy/gpulabel/dra.yaml's objects instead of the device-plugin
    # DaemonSet; its pod is one root container with the token and the kubelet plugin
    # directories, on every GPU node
    objs = objects({"gpulabel": {"mode": "dra"}})
    want = c().objects("deploy/gpulabel/dra.yaml")
    default = objects()
    util.check_eq(sorted(set(kinds(objs)) - set(kinds(default))), kinds(want),
                  "what the DRA mode adds: deploy/gpulabel/dra.yaml's objects")
    util.check_eq(sorted(set(kinds(default)) - set(kinds(objs))), [("DaemonSet", "gpulabel", "kube-system")],
                  "what the DRA mode takes away: the device plugin's DaemonSet")
    for o in want:
        got = find(objs, o["kind"], o["metadata"]["name"])
        if o["kind"] == "DaemonSet":
            spec = json.loads(json.dumps(got["spec"]["template"]["spec"]))
            exp = json.loads(json.dumps(o["spec"]["template"]["spec"]))
            # dra.yaml picks the labelled nodes as mode auto does; mode dra takes every GPU node
            drop_dra_label(exp)
            same_pod(spec, exp, "DaemonSet gpulabel-dra")
            continue
        for field in ("rules", "roleRef", "subjects", "spec"):
            util.check_eq(got.get(field), o.get(field), "%s %s: %s" % (o["kind"], o["metadata"]["name"], field))
    ds = pod(objs, "DaemonSet")
    util.check_eq((env(ds)["GPULABEL_MODE"], env(ds)["GPULABEL_DRIVER_NAME"],
                   env(ds)["GPULABEL_KUBELET_REGISTRAR_DIR"], env(ds)["GPULABEL_KUBELET_PLUGINS_DIR"],
                   env(ds)["GPULABEL_CDI_ROOT"]),
                  ("dra", "gpu.nvidia.com", "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins",
                   "/var/run/cdi"), "the DRA settings")
    util.check_eq([(v["name"], v.get("hostPath", {}).get("path")) for v in ds["volumes"]],
                  [("plugins-registry", "/var/lib/kubelet/plugins_registry"),
                   ("plugins", "/var/lib/kubelet/plugins"), ("cdi", "/var/run/cdi"), ("serviceaccount", None)],
                  "volumes in dra mode: no device-plugin directory, no /sys")
    util.check_eq([m["mountPath"] for m in ds["containers"][0]["volumeMounts"]],
                  ["/var/run/secrets/kubernetes.io/serviceaccount", "/var/lib/kubelet/plugins_registry",
                   "/var/lib/kubelet/plugins", "/var/run/cdi"], "mounts in dra mode")
    util.check_eq(ds["containers"][0]["securityContext"],
                  {"runAsUser": 0, "runAsGroup": 0, "allowPrivilegeEscalation": False,
                   "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}},
                  "root without capabilities (the kubelet's plugin directories are root's)")
    util.check_eq(dry_run_server(render({"gpulabel": {"mode": "dra"}})), 23,
                  "objects of the dra mode applied by the server dry run")


def test_auto_mode_splits_the_nodes_by_the_gpu_operator_label():
    # gpulabel.mode auto: both DaemonSets, on the nodes with and without
    # nvidia.com/gpu.deploy.dra-driver=true (appended to every required term)
    objs = objects({"gpulabel": {"mode": "auto"}})
    util.check_eq(sorted(n for k, n, _ in kinds(objs) if k == "DaemonSet"), ["gpulabel", "gpulabel-dra"],
                  "DaemonSets in auto mode")
    base = find(objects(), "DaemonSet")["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
        "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
    for name, op in (("gpulabel", "NotIn"), ("gpulabel-dra", "In")):
        terms = find(objs, "DaemonSet", name)["spec"]["template"]["spec"]["affinity"]["nodeAffinity"][
            "requiredDuringSchedulingIgnoredDuringExecution"]["nodeSelectorTerms"]
        util.check_eq(terms, [{"matchExpressions": t["matchExpressions"] + [
            {"key": "nvidia.com/gpu.deploy.dra-driver", "operator": op, "values": ["true"]}]} for t in base],
            "%s's nodes" % name)
    same_pod(find(objs, "DaemonSet", "gpulabel-dra")["spec"]["template"]["spec"],
             pod(c().objects("deploy/gpulabel/dra.yaml"), "DaemonSet"), "auto's gpulabel-dra")
    util.check_eq(find(objs, "DaemonSet", "gpulabel-dra")["spec"]["selector"]["matchLabels"],
                  {"app.kubernetes.io/name": "gpulabel-dra", "app.kubernetes.io/instance": "gpulabel"},
                  "the DRA DaemonSet's selector (not the other's)")
    dp = pod(objects(), "DaemonSet")
    util.check_eq((env(dp)["GPULABEL_MODE"], env(dp, 1)["GPULABEL_MODE"]), ("device-plugin", "device-plugin"),
                  "the default mode, in both containers")
    util.check_eq(dry_run_server(render({"gpulabel": {"mode": "auto"}})), 24,
                  "objects of the auto mode applied by the server dry run")
    other = objects({"namePrefix": "b-", "gpulabel": {"mode": "auto", "dra": {
        "driverName": "gpu.example.com", "extendedResourceName": "", "admissionPolicy": False}}},
        namespace="gpu-system")
    util.check_eq(sorted(n for k, n, _ in kinds(other) if k == "DeviceClass"),
                  ["gpu.example.com", "mig.gpu.example.com"], "DeviceClasses of another driver")
    util.check_eq("extendedResourceName" in find(other, "DeviceClass", "gpu.example.com")["spec"], False,
                  "extendedResourceName \"\" leaves it out")
    util.check_eq([n for k, n, _ in kinds(other) if k.startswith("ValidatingAdmission") and "slices" in n], [],
                  "admissionPolicy false")
    util.check_eq(find(other, "ClusterRoleBinding", "b-gpulabel-dra")["subjects"],
                  [{"kind": "ServiceAccount", "name": "b-gpulabel", "namespace": "gpu-system"}], "binding")
    util.check_eq(pod(objects({"gpulabel": {"mode": "dra", "dra": {"driverName": "gpu.example.com"}}}),
                      "DaemonSet")["containers"][0]["env"][1], {"name": "GPULABEL_MODE", "value": "dra"},
                  "the mode")
    vap = find(objects({"gpulabel": {"mode": "dra"}}, namespace="gpu-system"), "ValidatingAdmissionPolicy",
               "gpulabel-resourceslices")
    util.check_eq(vap["spec"]["matchConditions"][0]["expression"],
                  'request.userInfo.username == "system:serviceaccount:gpu-system:gpulabel"',
                  "the policy follows the namespace")


def namespaced(objs):
    """(kind, name, namespace) of each namespaced object, and the namespaces named inside the
    objects: subjects of bindings, gpusched's Lease namespace"""
    out = [(o["kind"], o["metadata"]["name"], o["metadata"]["namespace"]) for o in objs
           if o["metadata"].get("namespace")]
    for o in objs:
        for s in o.get("subjects", []):
            out.append((o["kind"] + " subject", s["name"], s.get("namespace")))
        if o["kind"] == "Deployment":
            for a in o["spec"]["template"]["spec"]["containers"][0]["args"]:
                if a.startswith("--leader-elect-resource-namespace="):
                    out.append(("Lease", "-", a.split("=", 1)[1]))
    return out


def test_the_release_namespace_is_honoured_everywhere():
    """helm install -n gpu-system puts every namespaced object there, and every namespace named
    inside them (binding subjects, the Lease) is that one too, but for the Role that lets
    gpulabel write its Node's Events: those live in "default", where the kubelet puts a Node's
    Events too; the value namespace is deprecated but still wins, with a warning in the notes."""
    node_events = {("Role", "gpulabel-events", "default"), ("RoleBinding", "gpulabel-events", "default")}
    for values in (None, {"gpulabel": {"enabled": False}}, {"gpusched": {"enabled": False}}):
        ns = namespaced(objects(values, namespace="gpu-system"))
        if len(ns) < 3:
            raise AssertionError("too few namespaced objects: %r" % ns)
        util.check_eq([x for x in ns if x[2] != "gpu-system" and tuple(x) not in node_events], [],
                      "not in the release's namespace %s" % values)
    util.check_eq(dry_run_server(render(namespace="gpu-system")), 17, "server dry run in gpu-system")
    # the deprecated value still names the namespace, and the notes say so
    ns = namespaced(objects({"namespace": "gpu-system"}, namespace="default"))
    util.check_eq({x[2] for x in ns if tuple(x) not in node_events}, {"gpu-system"},
                  "the deprecated value")
    p = helm("install", "gpulabel", CHART, "-n", "default", "--dry-run=client", "-f",
             values_file({"namespace": "gpu-system"}))
    if "WARNING: the value namespace is deprecated: the objects went to gpu-system" not in p.stdout:
        raise AssertionError("no deprecation warning in the notes: %r" % p.stdout[-600:])
    p = helm("install", "gpulabel", CHART, "-n", "gpu-system", "--dry-run=client")
    notes = p.stdout[p.stdout.index("NOTES:"):]
    if "WARNING" in notes or "gpulabel runs on GPU nodes in gpu-system:" not in notes:
        raise AssertionError("notes: %r" % notes)


def test_bad_values_fail_with_one_line():
    for values, want in (({"gpulabel": {"schemas": ["ack", "nfd"]}}, 'unknown schema "nfd"'),
                         ({"gpulabel": {"schemas": []}}, "gpulabel.schemas: empty"),
                         ({"gpulabel": {"migStrategy": "all"}}, 'gpulabel.migStrategy: "all"'),
                         ({"gpusched": {"profile": "fast"}}, 'gpusched.profile: "fast" (want default or gpu)'),
                         ({"gpusched": {"loggingFormat": "xml"}},
                          'gpusched.loggingFormat: "xml" (want text or json)'),
                         ({"gpulabel": {"loggingFormat": "JSON"}},
                          'gpulabel.loggingFormat: "JSON" (want text or json)'),
                         ({"gpulabel": {"mode": "both"}},
                          'gpulabel.mode: "both" (want device-plugin, dra or auto)')):
        p = helm("template", "gpulabel", CHART, "-f", values_file(values), check=False)
        if p.returncode == 0 or want not in p.stderr:
            raise AssertionError("helm template with %s: exit %d, stderr %r (want %r)" % (
                values, p.returncode, p.stderr, want))


def test_least_privilege_of_the_pod():
    """docs/security.md: the labeller runs as nobody with the only token; the device plugin as
    root without capabilities and without a token; no container sees the host's /sys."""
    ds = pod(objects(), "DaemonSet")
    util.check_eq(ds.get("automountServiceAccountToken"), False, "no token mounted by default")
    lab, dp = ds["containers"]
    util.check_eq((lab["securityContext"].get("runAsNonRoot"), lab["securityContext"].get("runAsUser")),
                  (True, 65534), "the labeller's user")
    util.check_eq(dp["securityContext"].get("runAsUser"), 0, "the device plugin's user")
    for ctr in (lab, dp):
        sc = ctr["securityContext"]
        util.check_eq((sc["allowPrivilegeEscalation"], sc["readOnlyRootFilesystem"], sc["capabilities"]),
                      (False, True, {"drop": ["ALL"]}), "%s: escalation, root fs, capabilities" % ctr["name"])
    util.check_eq([m["name"] for m in lab["volumeMounts"]], ["serviceaccount"], "the labeller's mounts")
    util.check_eq([m["name"] for m in dp["volumeMounts"]], ["device-plugins"], "the device plugin's mounts")
    util.check_eq([v.get("hostPath", {}).get("path") for v in ds["volumes"] if "hostPath" in v],
                  ["/var/lib/kubelet/device-plugins"], "hostPath volumes")
    sa = [v for v in ds["volumes"] if v["name"] == "serviceaccount"][0]["projected"]["sources"]
    util.check_eq(sa[0], {"serviceAccountToken": {"path": "token", "expirationSeconds": 3607}},
                  "a projected token, bound to the pod")


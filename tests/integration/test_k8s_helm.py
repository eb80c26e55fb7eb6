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


def render(values=None, release="gpulabel"):
    """helm template's output (YAML text) with these values over the chart's."""
    args = ["template", release, CHART]
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


def objects(values=None):
    return parse(render(values))


def find(objs, kind, name=None):
    got = [o for o in objs if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]
    if len(got) > 1:
        raise AssertionError("%d objects %s %s" % (len(got), kind, name or ""))
    return got[0] if got else None


def kinds(objs):
    return sorted((o["kind"], o["metadata"]["name"], o["metadata"].get("namespace", "")) for o in objs)


def pod(objs, kind):
    return find(objs, kind)["spec"]["template"]["spec"]


def env(spec):
    return {e["name"]: e.get("value") for e in spec["containers"][0].get("env", [])}


def dry_run_server(text):
    out = c().kubectl("apply", "--server-side", "--dry-run=server", "-f", "-", input=text)
    lines = [l for l in out.splitlines() if l.strip()]
    bad = [l for l in lines if not l.endswith("serverside-applied (server dry run)")]
    if bad or not lines:
        raise AssertionError("kubectl apply --dry-run=server said %r" % out)
    return len(lines)


# values that change every knob; what each does is asserted below
OTHER = {
    "namespace": "gpu-system",
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
    util.check_eq(dry_run_server(render()), 11, "objects applied by the server dry run")
    p = c().kubectl("get", "daemonset/gpulabel", "-n", "kube-system", check=False)
    if p.returncode == 0 or "NotFound" not in p.stderr:
        raise AssertionError("a server dry run stored objects: %s %s" % (p.stdout, p.stderr))


def test_other_values_pass_server_dry_run():
    util.check_eq(dry_run_server(render(OTHER)), 10, "objects applied by the server dry run")
    for values in ({"gpusched": {"enabled": False}}, {"gpulabel": {"enabled": False}},
                   {"gpusched": {"leaderElect": False}}, {"namePrefix": "b-", "gpulabel": {
                       "createRuntimeClass": False}}):
        dry_run_server(render(values))


# ---- the defaults are deploy/'s objects -------------------------------------------------------

def test_defaults_render_the_objects_of_deploy():
    objs = objects()
    want = []
    for f in ("deploy/gpulabel/daemonset.yaml", "deploy/gpulabel/rbac.yaml",
              "deploy/gpusched/deployment.yaml", "deploy/gpusched/rbac.yaml"):
        want += c().objects(f)
    util.check_eq(kinds(objs), kinds(want), "objects rendered with the default values")
    for o in objs:
        w = find(want, o["kind"], o["metadata"]["name"])
        for field in ("rules", "roleRef", "subjects", "handler"):
            util.check_eq(o.get(field), w.get(field), "%s %s: %s" % (o["kind"], o["metadata"]["name"], field))
    for kind in ("DaemonSet", "Deployment"):
        got, exp = pod(objs, kind), pod(want, kind)
        # the chart says more in the environment (GPULABEL_V, GPULABEL_DEVICE_PLUGIN, ...) and
        # its pod labels carry the release; the rest is the same pod
        missing = {k: v for k, v in env(exp).items() if env(got).get(k) != v}
        util.check_eq(missing, {}, "%s: deploy/'s environment not in the chart's" % kind)
        for s in (got, exp):
            s["containers"][0].pop("env", None)
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

def test_device_plugin_off_removes_the_mount_and_its_settings():
    on, off = pod(objects(), "DaemonSet"), pod(objects({"gpulabel": {"devicePlugin": {"enabled": False}}}), "DaemonSet")
    util.check_eq([v["name"] for v in on["volumes"]], ["device-plugins", "sys"], "volumes, plugin on")
    util.check_eq([v["name"] for v in off["volumes"]], ["sys"], "volumes, plugin off")
    util.check_eq([m["mountPath"] for m in off["containers"][0]["volumeMounts"]], ["/sys"], "mounts, plugin off")
    util.check_eq(env(on)["GPULABEL_DEVICE_PLUGIN"], "true", "GPULABEL_DEVICE_PLUGIN, plugin on")
    util.check_eq(env(off)["GPULABEL_DEVICE_PLUGIN"], "false", "GPULABEL_DEVICE_PLUGIN, plugin off")
    util.check_eq(sorted(k for k in env(off) if k.startswith(("GPULABEL_RESOURCE", "GPULABEL_REPLICAS",
                                                               "GPULABEL_DEVICE_"))),
                  ["GPULABEL_DEVICE_PLUGIN"], "device-plugin settings left with the plugin off")
    dp = pod(objects({"gpulabel": {"devicePlugin": {"dir": "/var/lib/k0s/kubelet/device-plugins",
                                                      "replicas": 4, "resourceName": "example.com/gpu"}}}),
             "DaemonSet")
    util.check_eq((dp["volumes"][0]["hostPath"]["path"], dp["containers"][0]["volumeMounts"][0]["mountPath"],
                   env(dp)["GPULABEL_DEVICE_PLUGIN_DIR"], env(dp)["GPULABEL_REPLICAS"],
                   env(dp)["GPULABEL_RESOURCE_NAME"]),
                  ("/var/lib/k0s/kubelet/device-plugins",) * 3 + ("4", "example.com/gpu"),
                  "the device-plugin directory, replicas and resource")


def test_gpusched_off_removes_its_objects():
    objs = objects({"gpusched": {"enabled": False}})
    util.check_eq(kinds(objs), [("ClusterRole", "gpulabel", ""), ("ClusterRoleBinding", "gpulabel", ""),
                                ("DaemonSet", "gpulabel", "kube-system"), ("RuntimeClass", "nvidia", ""),
                                ("ServiceAccount", "gpulabel", "kube-system")], "objects with gpusched off")
    objs = objects({"gpulabel": {"enabled": False}})
    util.check_eq(sorted({k for k, _, _ in kinds(objs)}), ["ClusterRole", "ClusterRoleBinding", "Deployment",
                                                             "Role", "RoleBinding", "ServiceAccount"],
                  "kinds with gpulabel off")
    util.check_eq({n for _, n, _ in kinds(objs)}, {"gpusched", "gpusched-leader-election"}, "names, gpulabel off")


def test_other_values_change_every_knob():
    objs = objects(OTHER)
    util.check_eq({ns for _, _, ns in kinds(objs)}, {"", "gpu-system"}, "namespaces")
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
    sched = pod(objs, "Deployment")
    args = sched["containers"][0]["args"]
    util.check_eq(env(ds).get("GPULABEL_LOGGING_FORMAT"), "json", "gpulabel's logging format")
    for a in ("--profile=default", "--scheduler-name=gpu-scheduler", "--leader-elect-resource-name=gpu-scheduler",
              "--leader-elect-resource-namespace=gpu-system", "--logging-format=json"):
        if a not in args:
            raise AssertionError("%s not in gpusched's args %s" % (a, args))
    util.check_eq(find(objs, "Deployment")["spec"]["replicas"], 1, "gpusched replicas")
    util.check_eq(find(objs, "Role")["rules"][1]["resourceNames"], ["gpu-scheduler"], "the Lease's name")
    util.check_eq(sched["containers"][0]["resources"], {"requests": {"cpu": "50m", "memory": "48Mi"}},
                  "gpusched resources")
    default = pod(objects(), "Deployment")["containers"][0]["args"]
    util.check_eq([a for a in default if a.startswith("--profile")], ["--profile=gpu"], "the default profile")
    util.check_eq([a for a in default if a.startswith("--logging-format")], [], "text logs by default")


def test_dra_mode_renders_its_objects_and_mounts():
    # gpulabel.mode dra (and auto): deploy/gpulabel/dra.yaml's objects, the kubelet plugin
    # directories, no device-plugin directory with dra; auto mounts both
    objs = objects({"gpulabel": {"mode": "dra"}})
    want = c().objects("deploy/gpulabel/dra.yaml")
    extra = sorted(set(kinds(objs)) - set(kinds(objects())))
    util.check_eq(extra, kinds(want), "what the DRA mode adds: deploy/gpulabel/dra.yaml's objects")
    for o in want:
        got = find(objs, o["kind"], o["metadata"]["name"])
        for field in ("rules", "roleRef", "subjects", "spec"):
            util.check_eq(got.get(field), o.get(field), "%s %s: %s" % (o["kind"], o["metadata"]["name"], field))
    ds = pod(objs, "DaemonSet")
    util.check_eq((env(ds)["GPULABEL_MODE"], env(ds)["GPULABEL_DRIVER_NAME"],
                   env(ds)["GPULABEL_KUBELET_REGISTRAR_DIR"], env(ds)["GPULABEL_KUBELET_PLUGINS_DIR"],
                   env(ds)["GPULABEL_CDI_ROOT"]),
                  ("dra", "gpu.nvidia.com", "/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins",
                   "/var/run/cdi"), "the DRA settings")
    util.check_eq([(v["name"], v["hostPath"]["path"]) for v in ds["volumes"]],
                  [("plugins-registry", "/var/lib/kubelet/plugins_registry"),
                   ("plugins", "/var/lib/kubelet/plugins"), ("cdi", "/var/run/cdi"), ("sys", "/sys")],
                  "volumes in dra mode: no device-plugin directory")
    util.check_eq([m["mountPath"] for m in ds["containers"][0]["volumeMounts"]],
                  ["/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins", "/var/run/cdi", "/sys"],
                  "mounts in dra mode")
    auto = pod(objects({"gpulabel": {"mode": "auto"}}), "DaemonSet")
    util.check_eq([v["name"] for v in auto["volumes"]],
                  ["device-plugins", "plugins-registry", "plugins", "cdi", "sys"], "volumes in auto mode")
    util.check_eq(env(pod(objects(), "DaemonSet"))["GPULABEL_MODE"], "device-plugin", "the default mode")
    util.check_eq(dry_run_server(render({"gpulabel": {"mode": "dra"}})), 17,
                  "objects of the dra mode applied by the server dry run")
    other = objects({"namespace": "gpu-system", "namePrefix": "b-", "gpulabel": {"mode": "auto", "dra": {
        "driverName": "gpu.example.com", "extendedResourceName": "", "admissionPolicy": False}}})
    util.check_eq(sorted(n for k, n, _ in kinds(other) if k == "DeviceClass"),
                  ["gpu.example.com", "mig.gpu.example.com"], "DeviceClasses of another driver")
    util.check_eq("extendedResourceName" in find(other, "DeviceClass", "gpu.example.com")["spec"], False,
                  "extendedResourceName \"\" leaves it out")
    util.check_eq([k for k, _, _ in kinds(other) if k.startswith("ValidatingAdmission")], [],
                  "admissionPolicy false")
    util.check_eq(find(other, "ClusterRoleBinding", "b-gpulabel-dra")["subjects"],
                  [{"kind": "ServiceAccount", "name": "b-gpulabel", "namespace": "gpu-system"}], "binding")
    vap = find(objects({"namespace": "gpu-system", "gpulabel": {"mode": "dra"}}),
               "ValidatingAdmissionPolicy")
    util.check_eq(vap["spec"]["matchConditions"][0]["expression"],
                  'request.userInfo.username == "system:serviceaccount:gpu-system:gpulabel"',
                  "the policy follows the namespace")


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

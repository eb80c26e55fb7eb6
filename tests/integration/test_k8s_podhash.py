"""A Deployment's pod-template-hash offline is the real controller's (src/manifest/podhash.c):
each Deployment below is created on the real kube-apiserver with the real
kube-controller-manager running (k8s_util), and the ReplicaSet the controller makes must carry
the name `gpusched render` gives it, NAME-HASH (so pod names match the cluster's up to their
random suffix). The templates cover what the API server defaults and what the hash prints:
resources in many spellings (rounded to milli, made canonical), images with and without tags,
probes, lifecycle hooks, env and envFrom, ports, volumes of several kinds, init containers,
affinity, tolerations, security contexts, annotations. tests/k8s/internal/podhash holds 400
more templates to the controller's own code without an API server."""
import json
import os

import k8s_util
import util

NS = "podhash"
_tmp = k8s_util.tmpdir("k8s-podhash-")


def deployment(name, spec, metadata=None):
    md = {"labels": {"app": name}}
    md.update(metadata or {})
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name, "namespace": NS},
            "spec": {"replicas": 0, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": md, "spec": spec}}}


def c(name="c", image="registry.k8s.io/pause:3.10", **kw):
    out = {"name": name, "image": image}
    out.update(kw)
    return out


DEPLOYMENTS = [
    deployment("plain", {"containers": [c()]}),
    deployment("no-tag", {"containers": [c(image="nginx"), c("latest", image="nginx:latest"),
                                         c("digest", image="ghcr.io/a/b@sha256:" + "0" * 64)]}),
    deployment("resources", {"containers": [
        c(resources={"limits": {"cpu": "1.5", "memory": "1536Mi", "nvidia.com/gpu": 1,
                                "ephemeral-storage": "2G"},
                     "requests": {"cpu": "100m", "memory": 128974848}}),
        c("second", resources={"requests": {"cpu": "100n", "memory": "1e9", "ephemeral-storage": "0.5Gi"}}),
        c("third", resources={"limits": {"cpu": 2, "memory": "8Gi"}, "requests": {"cpu": "2000m", "memory": "2000M"}})]}),
    deployment("probes-env-ports", {"containers": [c(
        ports=[{"containerPort": 8080, "name": "http"}, {"containerPort": 53, "protocol": "UDP"}],
        env=[{"name": "A", "value": "1"},
             {"name": "POD", "valueFrom": {"fieldRef": {"fieldPath": "metadata.name"}}},
             {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu", "divisor": "1m"}}},
             {"name": "MEM", "valueFrom": {"resourceFieldRef": {"resource": "limits.memory"}}}],
        envFrom=[{"prefix": "X_", "configMapRef": {"name": "cm", "optional": True}}],
        livenessProbe={"httpGet": {"port": "http"}, "initialDelaySeconds": 5},
        readinessProbe={"tcpSocket": {"port": 8080}, "periodSeconds": 3},
        startupProbe={"grpc": {"port": 9090}},
        lifecycle={"preStop": {"httpGet": {"port": 80, "path": "/stop"}}, "postStart": {"exec": {"command": ["true"]}}},
        command=["sh", "-c"], args=["sleep 3600"])]}),
    deployment("volumes", {
        "volumes": [{"name": "empty"}, {"name": "sized", "emptyDir": {"sizeLimit": "1Gi", "medium": "Memory"}},
                    {"name": "cm", "configMap": {"name": "cm", "items": [{"key": "a", "path": "a"}]}},
                    {"name": "sec", "secret": {"secretName": "s", "defaultMode": 256}},
                    {"name": "host", "hostPath": {"path": "/var/log"}},
                    {"name": "proj", "projected": {"sources": [
                        {"serviceAccountToken": {"path": "token", "audience": "x"}},
                        {"downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}}]}},
                    {"name": "down", "downwardAPI": {"items": [{"path": "n", "fieldRef": {"fieldPath": "metadata.name"}}]}},
                    {"name": "eph", "ephemeral": {"volumeClaimTemplate": {"spec": {
                        "accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1.5Gi"}}}}}}],
        "containers": [c(volumeMounts=[{"name": "sized", "mountPath": "/data"},
                                       {"name": "proj", "mountPath": "/p", "readOnly": True}])]}),
    deployment("scheduling", {
        "initContainers": [c("init", image="busybox:1.36", command=["true"]),
                           c("sidecar", image="busybox:1.36", restartPolicy="Always")],
        "containers": [c(securityContext={"runAsNonRoot": True, "runAsUser": 1000,
                                          "capabilities": {"drop": ["ALL"]}, "allowPrivilegeEscalation": False})],
        "nodeSelector": {"aliyun.accelerator/nvidia_name": "Tesla-M40"},
        "affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [
            {"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a", "b"]}]}]}},
            "podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 50, "podAffinityTerm": {
                "labelSelector": {"matchLabels": {"app": "scheduling"}}, "topologyKey": "kubernetes.io/hostname"}}]}},
        "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"},
                        {"key": "k", "operator": "Equal", "value": "v", "effect": "NoExecute", "tolerationSeconds": 30}],
        "topologySpreadConstraints": [{"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
                                       "labelSelector": {"matchLabels": {"app": "scheduling"}}}],
        "securityContext": {"fsGroup": 2000}, "serviceAccount": "old-name",
        "terminationGracePeriodSeconds": 60, "dnsPolicy": "ClusterFirstWithHostNet", "hostNetwork": True,
        "automountServiceAccountToken": False},
        metadata={"annotations": {"b": "2", "a": "1", "prometheus.io/scrape": "true"}}),
]


def test_replicaset_names_are_the_controllers():
    cl = k8s_util.cluster("podhash")
    cl.kubectl("create", "namespace", NS)
    path = os.path.join(_tmp, "deployments.json")
    with open(path, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": DEPLOYMENTS}, f)
    # the ServiceAccounts some templates name need not exist for a Deployment of 0 replicas
    cl.kubectl("apply", "-f", path)
    p = util.run([util.binary("gpusched"), "render", "-f", path, "-o", "json"])
    util.check_eq(p.returncode, 0, "render: %s" % p.stderr)
    ours = {o["metadata"]["ownerReferences"][0]["name"]: o["metadata"]["name"]
            for o in json.loads(p.stdout)["items"] if o["kind"] == "ReplicaSet"}
    util.check_eq(sorted(ours), sorted(d["metadata"]["name"] for d in DEPLOYMENTS), "render's ReplicaSets")

    def theirs():
        items = cl.get("/apis/apps/v1/namespaces/%s/replicasets" % NS)["items"]
        got = {i["metadata"]["ownerReferences"][0]["name"]: i["metadata"]["name"] for i in items}
        return got if len(got) == len(DEPLOYMENTS) else None
    got = k8s_util.wait_for("the controller's ReplicaSets", theirs, timeout=120)
    util.check_eq(ours, got, "ReplicaSet names (NAME-pod-template-hash)")
    # and the label the controller puts on them
    for i in cl.get("/apis/apps/v1/namespaces/%s/replicasets" % NS)["items"]:
        util.check_eq(i["metadata"]["name"].rsplit("-", 1)[1], i["metadata"]["labels"]["pod-template-hash"],
                      "the label of " + i["metadata"]["name"])


def test_seed_deployment_pod_names_match_up_to_the_suffix():
    """examples/seed's tf-notebook as the seed's own walkthrough deploys it: the pods the real
    controllers create are named as simulate names them, but for the 5 random characters."""
    cl = k8s_util.cluster("podhash")
    ns = "podhash-seed"
    if not cl.get_or_none("/api/v1/namespaces/" + ns):
        cl.kubectl("create", "namespace", ns)
    cl.kubectl("apply", "-n", ns, "-f", os.path.join(util.SRC, "examples", "seed", "tf-notebook.yaml"))
    p = util.run([util.binary("gpusched"), "render", "-f", os.path.join(util.SRC, "examples", "seed", "tf-notebook.yaml"),
                  "-o", "json"])
    ours = [o["metadata"]["name"] for o in json.loads(p.stdout)["items"] if o["kind"] == "Pod"]
    pods = k8s_util.wait_for("tf-notebook's pod", lambda: [
        q["metadata"]["name"] for q in cl.get("/api/v1/namespaces/%s/pods" % ns)["items"]] or None, timeout=120)
    util.check_eq([n[:-5] for n in pods], [n[:-5] for n in ours], "pod names up to the random suffix")

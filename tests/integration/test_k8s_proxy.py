"""Both binaries through `kubectl proxy` (the real one, in front of the real kube-apiserver),
with a kubeconfig whose user is `{}`: plain HTTP to 127.0.0.1, no credentials of their own
(the proxy adds the admin's), so no Authorization header may be sent and none is needed.
gpulabel labels its node; gpusched serve lists, watches, binds and writes events through it.
The audit log shows the requests arriving as the proxy's user."""
import atexit
import os
import re
import subprocess

import k8s_util
import util
from k8s_util import wait_for
from serve_util import Serve

ADMIN = "kubernetes-admin"  # the user of the proxy's own (admin) kubeconfig
_tmp = k8s_util.tmpdir("k8s-proxy-tmp-")
_state = {}


def setup():
    """The cluster, a kubectl proxy on a free port, and a kubeconfig pointing at it with
    user: {}."""
    if not _state:
        c = k8s_util.cluster("proxy")
        proxy = k8s_util.Process([k8s_util.KUBECTL, "--kubeconfig", c.kubeconfig, "proxy", "--port=0",
                                  "--address=127.0.0.1"], os.path.join(_tmp, "proxy.log"))
        atexit.register(proxy.stop)
        port = wait_for("kubectl proxy to listen", lambda: proxy.alive() or re.search(
            r"Starting to serve on 127\.0\.0\.1:(\d+)", proxy.log()))
        url = "http://127.0.0.1:%s" % port.group(1)
        kc = os.path.join(_tmp, "kubeconfig-proxy")
        with open(kc, "w") as f:
            f.write("apiVersion: v1\nkind: Config\nclusters:\n- name: proxy\n  cluster:\n"
                    "    server: %s\nusers:\n- name: proxy\n  user: {}\ncontexts:\n- name: proxy\n"
                    "  context:\n    cluster: proxy\n    user: proxy\ncurrent-context: proxy\n" % url)
        _state.update(c=c, proxy=proxy, kc=kc)
    return _state["c"], _state["kc"]


def env():
    return {k: v for k, v in os.environ.items()
            if not k.startswith("GPULABEL_") and k not in ("NODE_NAME", "KUBECONFIG", "FAKE_NVML_CONFIG")}


def test_gpulabel_oneshot_through_kubectl_proxy():
    c, kc = setup()
    c.create_node(k8s_util.gpu_node("proxy-gpu", labels={"team.example.com/owner": "ml"}))
    p = subprocess.run([util.binary("gpulabel"), "--oneshot", "--node-name", "proxy-gpu", "--kubeconfig", kc,
                        "--nvml-lib", util.fake_nvml()], capture_output=True, text=True, timeout=60, env=env())
    util.check_eq(p.returncode, 0, "exit status (stderr: %s)" % p.stderr)
    labels = c.get("/api/v1/nodes/proxy-gpu")["metadata"]["labels"]
    util.check_eq((labels.get("aliyun.accelerator/nvidia_name"), labels.get("team.example.com/owner")),
                  ("Tesla-M40", "ml"), "labels")
    patches = [e for e in c.audit(verb="patch", resource="nodes", subresource="")
               if e["objectRef"].get("name") == "proxy-gpu"]
    util.check_eq([(e["user"]["username"], e["responseStatus"]["code"]) for e in patches], [(ADMIN, 200)],
                  "the patch, as the proxy's user")


def test_gpusched_serve_through_kubectl_proxy():
    c, kc = setup()
    c.create_node(k8s_util.gpu_node("proxy-node", gpus=0, labels={"pool": "proxy"}))
    c.kubectl("create", "namespace", "proxied")
    wait_for("the default ServiceAccount", lambda: c.get_or_none(
        "/api/v1/namespaces/proxied/serviceaccounts/default"))
    sv = Serve(None, ["-v", "2"], _tmp, name="proxy", kubeconfig=kc, wrap=k8s_util.PDEATHSIG)
    try:
        for i in range(3):
            c.create("/api/v1/namespaces/proxied/pods", {
                "apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p%d" % i},
                "spec": {"schedulerName": "gpusched", "nodeSelector": {"pool": "proxy"},
                         "containers": [{"name": "c", "image": "registry.k8s.io/pause:3.10"}]}})
        wait_for("3 pods bound through the proxy (a watch event brought each one)", lambda: sv._dead() or all(
            p["spec"].get("nodeName") == "proxy-node" for p in c.pods("proxied")) and len(c.pods("proxied")) == 3)
        wait_for("3 Scheduled events", lambda: len(c.events("proxied", "Scheduled")) == 3)
        binds = [e for e in c.audit(verb="create", resource="pods", subresource="binding")
                 if e["objectRef"].get("namespace") == "proxied"]
        util.check_eq(sorted((e["user"]["username"], e["responseStatus"]["code"]) for e in binds),
                      [(ADMIN, 201)] * 3, "the bindings, as the proxy's user")
    finally:
        util.check_eq(sv.stop(), 0, "exit status on SIGTERM")

"""Bounds on hostile or large manifests (docs/security.md): a YAML alias bomb is
refused as Kubernetes' YAML decoder refuses it, anchors cost what they hold, and `gpusched
render` holds a few times its input, not a tree of every object."""
import os
import resource
import subprocess

import util


def run_limited(args, cpu_seconds, stdout=subprocess.DEVNULL):
    """Runs args with a CPU-time limit; returns (returncode, stderr, peak RSS in bytes)."""
    def limit():
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))

    p = subprocess.Popen(args, stdout=stdout, stderr=subprocess.PIPE, preexec_fn=limit)
    err = p.stderr.read().decode(errors="replace")
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    p.stderr.close()
    return p.returncode, err, ru.ru_maxrss * 1024


def TempDir():
    return util.TempDir("gpulabel-bounds-")


def bomb(levels=9):
    """A Pod whose args are 9^levels strings from a few hundred bytes (billion laughs)."""
    s = "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n  annotations:\n"
    s += "    a0: &a0 [lol,lol,lol,lol,lol,lol,lol,lol,lol]\n"
    for i in range(1, levels):
        s += "    a%d: &a%d [%s]\n" % (i, i, ",".join(["*a%d" % (i - 1)] * 9))
    s += "spec:\n  containers:\n  - name: c\n    image: x\n    args: *a%d\n" % (levels - 1)
    return s


def test_alias_bomb_refused_as_kubernetes_does():
    with TempDir() as d:
        f = d.write("bomb.yaml", bomb())
        # before the bound: 9^9 strings written out, minutes of CPU
        rc, err, _ = run_limited([util.binary("gpusched"), "render", "-f", f], 20)
        util.check_eq(rc, 1, "exit status (stderr %r)" % err)
        want = "gpusched: %s: line 9: document contains excessive aliasing\n" % f
        util.check_eq(err, want, "message")


def test_anchors_cost_what_they_hold():
    # 160,000 anchors and their aliases: a linear lookup took 72 s of CPU; a hash, well under 1
    n = 160000
    s = ["apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: a\ndata:\n"]
    s += ["  k%d: &a%d v%d\n" % (i, i, i) for i in range(n)]
    s += ["  r%d: *a%d\n" % (i, i) for i in range(n)]
    with TempDir() as d:
        f = d.write("anchors.yaml", "".join(s))
        rc, err, _ = run_limited([util.binary("gpusched"), "render", "-f", f, "-o", "json"], 20)
        util.check_eq(rc, 0, "exit status (stderr %r)" % err)


def manifest(target):
    """Deterministic multi-document YAML of about target bytes: Pods, Deployments, Services."""
    out, size, i = [], 0, 0
    while size < target:
        kind = i % 10
        if kind < 7:
            doc = ("apiVersion: v1\nkind: Pod\nmetadata:\n  name: pod-%d\n  namespace: ns-%d\n"
                   "  labels: {app: app-%d, tier: t%d}\n  annotations:\n"
                   "    note: \"pod %d of a generated manifest, annotation text to give it bulk\"\n"
                   "spec:\n  nodeSelector: {aliyun.accelerator/nvidia_name: Tesla-M40}\n"
                   "  containers:\n  - name: main\n    image: registry.example.com/app:%d\n"
                   "    args: [--port, \"%d\", --verbose]\n    env:\n    - {name: A, value: \"%d\"}\n"
                   "    resources:\n      requests: {cpu: 100m, memory: 128Mi}\n"
                   "      limits: {nvidia.com/gpu: 1}\n"
                   % (i, i % 7, i % 13, i % 3, i, i % 5, 8000 + i % 100, i))
        elif kind < 9:
            doc = ("apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: dep-%d\n"
                   "  namespace: ns-%d\nspec:\n  replicas: 2\n  selector:\n"
                   "    matchLabels: {app: dep-%d}\n  template:\n    metadata:\n"
                   "      labels: {app: dep-%d}\n    spec:\n      containers:\n"
                   "      - name: c\n        image: nginx:%d\n"
                   "        resources: {requests: {cpu: 50m}}\n"
                   % (i, i % 7, i, i, i % 9))
        else:
            doc = ("apiVersion: v1\nkind: Service\nmetadata:\n  name: svc-%d\n  namespace: ns-%d\n"
                   "spec:\n  selector: {app: app-%d}\n  ports:\n  - {port: 80, targetPort: 8080}\n"
                   % (i, i % 7, i % 13))
        out.append("---\n" + doc)
        size += len(doc) + 4
        i += 1
    return "".join(out)


def test_render_holds_a_few_times_its_input():
    text = manifest(8 << 20)
    with TempDir() as d:
        f = d.write("big.yaml", text)
        rc, err, peak = run_limited([util.binary("gpusched"), "render", "-f", f, "-o", "json"],
                                    60)
        util.check_eq(rc, 0, "exit status (stderr %r)" % err)
        if util.sanitized(util.binary("gpusched")):
            return
        # every object's tree held until the end: 14 times the input (122 MB here); one item
        # at a time, the objects kept as text: about twice
        if peak > 4 * len(text):
            raise AssertionError("render of %d bytes peaked at %d bytes (%.1fx), over 4x" %
                                 (len(text), peak, peak / len(text)))

"""End-to-end tests of the gpusched command line (simulate, explain, nodes, version, help) on
examples/seed/ and small inputs written here: outputs, exit codes, error lines."""
import json
import os
import re
import subprocess
import tempfile

import util

SEED = os.path.join(util.SRC, "examples", "seed")
M40 = ["cn-beijing.i-2ze8o1a45qdv5q8a7luz", "cn-beijing.i-2ze8o1a45qdv5q8a7lv0"]
MASTERS = ["cn-beijing.i-2ze2dy2h9w97v65uuaft", "cn-beijing.i-2ze9xylyn11vop7g5bwe",
           "cn-beijing.i-2zed5sw8snjniq6mf5e5"]
WORKER = "cn-beijing.i-2zej9s0zijykp9pwf7lu"
MASTER_TAINT = "node(s) had untolerated taint(s)"
THIRD_REPLICA = (
    "0/6 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
    "2 node(s) didn't have free ports for the requested pod ports, "
    "3 node(s) had untolerated taint(s). "
    "preemption: 0/6 nodes are available: 2 No preemption victims found for incoming pod, "
    "4 Preemption is not helpful for scheduling.")


def gpusched(*args, input=None):
    return util.run([util.binary("gpusched")] + list(args), input=input)


def expect_exit(p, code, what):
    if p.returncode != code:
        raise AssertionError("%s: exit %d, want %d; stdout %r stderr %r"
                             % (what, p.returncode, code, p.stdout, p.stderr))


def one_error_line(p, what):
    """The error contract: exactly one line on stderr, starting with "gpusched: "."""
    lines = p.stderr.splitlines()
    if len(lines) != 1 or not lines[0].startswith("gpusched: "):
        raise AssertionError("%s: want one 'gpusched: ...' line on stderr, got %r" % (what, p.stderr))
    return lines[0]


def TempDir():
    return util.TempDir("gpusched-cli-")


def seed_with_replicas(tmp, n):
    """A copy of examples/seed/ with tf-notebook scaled to n replicas."""
    for f in os.listdir(SEED):
        if f.endswith(".yaml"):
            with open(os.path.join(SEED, f), encoding="utf-8") as src:
                text = src.read()
            if f == "tf-notebook.yaml":
                text = text.replace("replicas: 1\n", "replicas: %d\n" % n, 1)
            tmp.write(f, text)
    return tmp.path


NODE = """apiVersion: v1
kind: Node
metadata: {name: %s}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
POD = """apiVersion: v1
kind: Pod
metadata: {name: %s}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]
"""


# --- help, version, usage errors ---------------------------------------------------------

def test_help_on_every_command():
    for args in (["--help"], ["-h"], ["help"], ["simulate", "--help"], ["simulate", "-h"],
                 ["explain", "--help"], ["nodes", "--help"], ["nodes", "-h"],
                 ["version", "--help"], ["serve", "--help"]):
        p = gpusched(*args)
        expect_exit(p, 0, " ".join(args))
        if "Usage:" not in p.stdout and "usage:" not in p.stdout.lower():
            raise AssertionError("%s: no usage on stdout: %r" % (args, p.stdout))


def test_help_mentions_every_flag():
    p = gpusched("simulate", "--help")
    for flag in ("--filename", "--output", "--profile", "--scheduler-name", "--seed"):
        if flag not in p.stdout:
            raise AssertionError("simulate --help lacks %s" % flag)
    p = gpusched("nodes", "--help")
    for flag in ("--selector", "--label-columns", "--output"):
        if flag not in p.stdout:
            raise AssertionError("nodes --help lacks %s" % flag)


def test_no_command_is_a_usage_error():
    p = gpusched()
    expect_exit(p, 2, "no arguments")
    if "Usage:" not in p.stderr:
        raise AssertionError("want usage on stderr, got %r" % p.stderr)


def test_version():
    p = gpusched("version")
    expect_exit(p, 0, "version")
    if not re.match(r"^gpusched \d+\.\d+\.\d+\n$", p.stdout):
        raise AssertionError("version output %r" % p.stdout)


def test_unknown_command():
    p = gpusched("simulat")
    expect_exit(p, 2, "unknown command")
    util.check_eq(p.stderr.splitlines()[0], 'gpusched: unknown command "simulat"', "stderr")


def test_unknown_flag_names_it_and_hints():
    for cmd in ("simulate", "explain", "nodes"):
        p = gpusched(cmd, "-f", SEED, "--x")
        expect_exit(p, 2, cmd + " --x")
        util.check_eq(p.stderr.splitlines(),
                      ["gpusched: unknown flag: --x", "See 'gpusched %s --help' for usage." % cmd],
                      "stderr")
    p = gpusched("nodes", "-f", SEED, "-q")
    expect_exit(p, 2, "nodes -q")
    util.check_eq(p.stderr.splitlines()[0], "gpusched: unknown shorthand flag: 'q' in -q", "stderr")


def test_missing_flag_value():
    p = gpusched("simulate", "-f")
    expect_exit(p, 2, "-f without a value")
    util.check_eq(p.stderr.splitlines()[0], "gpusched: flag needs an argument: 'f' in -f", "stderr")


def test_no_filename_reads_the_cluster_of_the_kubeconfig():
    """Without -f the commands read the cluster kubectl would use: with no kubeconfig and no
    in-cluster service account that is one clear line and exit 1."""
    with TempDir() as t:
        env = {k: v for k, v in os.environ.items()
               if k not in ("KUBECONFIG", "KUBERNETES_SERVICE_HOST", "KUBERNETES_SERVICE_PORT")}
        env["HOME"] = t.path
        pod = t.write("pod.yaml", POD % "p")
        for args in (["simulate"], ["nodes"], ["explain", "p"], ["capacity", "-f", pod]):
            p = subprocess.run([util.binary("gpusched")] + args, env=env, capture_output=True,
                               text=True, timeout=60)
            expect_exit(p, 1, " ".join(args))
            line = one_error_line(p, " ".join(args))
            if "no kubeconfig found (~/.kube/config does not exist)" not in line:
                raise AssertionError(line)


def test_bad_output_format_seed_and_profile():
    p = gpusched("simulate", "-f", SEED, "-o", "xml")
    expect_exit(p, 2, "-o xml")
    util.check_eq(p.stderr.splitlines()[0],
                  'gpusched: unable to match a printer suitable for the output format "xml", '
                  'allowed formats are: json,name,wide,yaml', "stderr")
    p = gpusched("simulate", "-f", SEED, "--seed", "-3")
    expect_exit(p, 2, "--seed -3")
    p = gpusched("simulate", "-f", SEED, "--profile", "fast")
    expect_exit(p, 2, "--profile fast")
    if '"fast"' not in p.stderr:
        raise AssertionError("stderr %r" % p.stderr)


def test_bad_percentage_of_nodes_to_score():
    for cmd in ("simulate", "explain"):
        for v in ("101", "-1", "x", "", "5.5"):
            args = [cmd, "-f", SEED, "--percentage-of-nodes-to-score", v] + (["p"] if cmd == "explain" else [])
            p = gpusched(*args)
            expect_exit(p, 2, "%s --percentage-of-nodes-to-score %r" % (cmd, v))
            util.check_eq(p.stderr.splitlines(),
                          ['gpusched: invalid argument "%s" for "--percentage-of-nodes-to-score" '
                           'flag: must be an integer from 0 to 100' % v,
                           "See 'gpusched %s --help' for usage." % cmd], "stderr")
        p = gpusched(cmd, "--help")
        if "--percentage-of-nodes-to-score" not in p.stdout:
            raise AssertionError("%s --help lacks --percentage-of-nodes-to-score" % cmd)


def test_explain_needs_exactly_one_pod():
    expect_exit(gpusched("explain", "-f", SEED), 2, "explain without POD")
    expect_exit(gpusched("explain", "-f", SEED, "a", "b"), 2, "explain with two PODs")


# --- nodes -------------------------------------------------------------------------------

def test_nodes_selector_name_output_is_exactly_the_two_m40_nodes():
    p = gpusched("nodes", "-f", SEED, "-l", "aliyun.accelerator/nvidia_name=Tesla-M40", "-o", "name")
    expect_exit(p, 0, "nodes -l -o name")
    util.check_eq(p.stdout, "".join("node/%s\n" % n for n in M40), "stdout")
    util.check_eq(p.stderr, "", "stderr")


def test_nodes_selector_grammar():
    cases = {
        "!aliyun.accelerator/nvidia_name": MASTERS[:1] + MASTERS[1:] + [WORKER],
        "aliyun.accelerator/nvidia_name": M40,
        "aliyun.accelerator/nvidia_name notin (Tesla-M40)": None,  # every non-M40 node
        "aliyun.accelerator/nvidia_count>0": M40,
        "aliyun.accelerator/nvidia_name in (Tesla-M40,Tesla-V100),kubernetes.io/hostname=" + M40[1]: M40[1:],
        "node-role.kubernetes.io/master": MASTERS,
        "aliyun.accelerator/nvidia_name!=Tesla-M40": None,
    }
    for sel, want in cases.items():
        if want is None:
            want = [n for n in MASTERS + [WORKER]]
        p = gpusched("nodes", "-f", SEED, "-l", sel, "-o", "name")
        expect_exit(p, 0, "-l " + sel)
        util.check_eq(p.stdout, "".join("node/%s\n" % n for n in sorted(want)), "-l " + sel)


def test_nodes_table_like_kubectl():
    p = gpusched("nodes", "-f", SEED)
    expect_exit(p, 0, "nodes")
    # kubectl's tabwriter: every column but the last padded to max(10, widest + 3)
    want = (
        "NAME                                STATUS    ROLES     GPU-NAME    GPU-COUNT   GPU-MEM    GPU-FREE\n"
        "cn-beijing.i-2ze2dy2h9w97v65uuaft   Ready     master    <none>      <none>      <none>     0\n"
        "cn-beijing.i-2ze8o1a45qdv5q8a7luz   Ready     <none>    Tesla-M40   1           12209MiB   1\n"
        "cn-beijing.i-2ze8o1a45qdv5q8a7lv0   Ready     <none>    Tesla-M40   1           12209MiB   1\n"
        "cn-beijing.i-2ze9xylyn11vop7g5bwe   Ready     master    <none>      <none>      <none>     0\n"
        "cn-beijing.i-2zed5sw8snjniq6mf5e5   Ready     master    <none>      <none>      <none>     0\n"
        "cn-beijing.i-2zej9s0zijykp9pwf7lu   Ready     <none>    <none>      <none>      <none>     0\n")
    util.check_eq(p.stdout, want, "nodes table")


def test_nodes_reads_gfd_labels_and_names_the_source():
    """A node labelled by NVIDIA GPU Feature Discovery (nvidia.com/gpu.product, gpu.count,
    gpu.memory in MiB) shows its GPUs as one with the seed's labels does; -o wide and -o json
    say which schema they came from (the seed's first when a node has both, as gpulabel
    writes both)."""
    nodes = """apiVersion: v1
kind: Node
metadata:
  name: gfd-1
  labels: {nvidia.com/gpu.product: NVIDIA-A100-SXM4-80GB, nvidia.com/gpu.count: "8", nvidia.com/gpu.memory: "81920"}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "8"}}
---
apiVersion: v1
kind: Node
metadata:
  name: both-1
  labels: {aliyun.accelerator/nvidia_name: Tesla-M40, aliyun.accelerator/nvidia_count: "1",
           aliyun.accelerator/nvidia_mem: 12209MiB, nvidia.com/gpu.product: Tesla-M40,
           nvidia.com/gpu.count: "1", nvidia.com/gpu.memory: "12209"}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110", nvidia.com/gpu: "1"}}
---
apiVersion: v1
kind: Node
metadata: {name: cpu-1}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
"""
    p = gpusched("nodes", "-f", "-", input=nodes)
    expect_exit(p, 0, "nodes")
    rows = {l.split()[0]: l.split()[3:7] for l in p.stdout.splitlines()[1:]}
    util.check_eq(rows, {"gfd-1": ["NVIDIA-A100-SXM4-80GB", "8", "81920MiB", "8"],
                         "both-1": ["Tesla-M40", "1", "12209MiB", "1"],
                         "cpu-1": ["<none>", "<none>", "<none>", "0"]}, "GPU columns")
    p = gpusched("nodes", "-f", "-", "-o", "wide", input=nodes)
    lines = p.stdout.splitlines()
    col = lines[0].split().index("GPU-SOURCE")
    util.check_eq({l.split()[0]: l.split()[col] for l in lines[1:]},
                  {"gfd-1": "gfd", "both-1": "aliyun", "cpu-1": "<none>"}, "GPU-SOURCE")
    p = gpusched("nodes", "-f", "-", "-o", "json", input=nodes)
    got = {i["metadata"]["name"]: i["gpusched"].get("gpu") for i in json.loads(p.stdout)["items"]}
    util.check_eq(got, {"gfd-1": {"source": "gfd", "product": "NVIDIA-A100-SXM4-80GB", "count": "8",
                                  "memory": "81920MiB"},
                        "both-1": {"source": "aliyun", "product": "Tesla-M40", "count": "1",
                                   "memory": "12209MiB"},
                        "cpu-1": None}, "json")


def test_nodes_label_columns_and_no_match():
    p = gpusched("nodes", "-f", SEED, "-l", "aliyun.accelerator/nvidia_name", "-L",
                 "aliyun.accelerator/nvidia_name,beta.kubernetes.io/instance-type")
    expect_exit(p, 0, "nodes -L")
    header = p.stdout.splitlines()[0].split()
    util.check_eq(header[-2:], ["NVIDIA_NAME", "INSTANCE-TYPE"], "-L headers")
    util.check_eq(p.stdout.splitlines()[1].split()[-2:], ["Tesla-M40", "ecs.gn4-c4g1.xlarge"], "-L cells")
    for fmt in ("wide", "name"):
        p = gpusched("nodes", "-f", SEED, "-l", "aliyun.accelerator/nvidia_name=Tesla-V100", "-o", fmt)
        expect_exit(p, 0, "no match")
        util.check_eq(p.stdout, "", "stdout")
        util.check_eq(p.stderr, "No resources found\n", "stderr")
    p = gpusched("nodes", "-f", SEED, "-l", "aliyun.accelerator/nvidia_name=Tesla-V100", "-o", "json")
    util.check_eq(json.loads(p.stdout), {"apiVersion": "v1", "kind": "List", "items": []}, "json")


def test_nodes_free_gpus_count_bound_pods():
    with TempDir() as t:
        t.write("nodes.yaml", """apiVersion: v1
kind: Node
metadata: {name: gpu, labels: {aliyun.accelerator/nvidia_name: Tesla-T4}}
spec:
  unschedulable: true
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110", nvidia.com/gpu: "4"}}
---
apiVersion: v1
kind: Pod
metadata: {name: trainer}
spec:
  nodeName: gpu
  containers: [{name: c, image: t, resources: {limits: {nvidia.com/gpu: 3}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: pending}
spec:
  containers: [{name: c, image: t, resources: {limits: {nvidia.com/gpu: 1}}}]
""")
        p = gpusched("nodes", "-f", t.path)
        expect_exit(p, 0, "nodes")
        row = p.stdout.splitlines()[1].split()
        # no Ready condition in the manifest: kubectl says Unknown
        util.check_eq(row, ["gpu", "Unknown,SchedulingDisabled", "<none>", "Tesla-T4", "<none>",
                            "<none>", "1"], "row")
        p = gpusched("nodes", "-f", t.path, "-o", "wide")
        expect_exit(p, 0, "nodes -o wide")
        util.check_eq(p.stdout.splitlines()[0].split()[7:],
                      ["GPU-SOURCE", "GPU-ALLOCATABLE", "CPU-REQUESTS", "MEMORY-REQUESTS", "PODS", "TAINTS"],
                      "wide header")
        util.check_eq(p.stdout.splitlines()[1].split()[7:], ["aliyun", "4", "0/8", "0/32Gi", "1/110", "<none>"],
                      "wide row")
        p = gpusched("nodes", "-f", t.path, "-o", "json")
        expect_exit(p, 0, "nodes -o json")
        doc = json.loads(p.stdout)
        util.check_eq((doc["kind"], len(doc["items"])), ("List", 1), "list")
        item = doc["items"][0]
        util.check_eq(item["metadata"]["name"], "gpu", "name")
        util.check_eq(item["spec"].get("unschedulable"), True, "unschedulable")
        util.check_eq(item["status"]["allocatable"]["nvidia.com/gpu"], "4", "allocatable")
        util.check_eq(item["gpusched"]["free"]["nvidia.com/gpu"], "1", "free")


def test_nodes_status_is_the_ready_condition_like_kubectl():
    def n(name, cond, cordoned=False):
        conds = "" if cond is None else \
            ", conditions: [{type: MemoryPressure, status: 'False'}, {type: Ready, status: '%s'}]" % cond
        return ("---\napiVersion: v1\nkind: Node\nmetadata: {name: %s}\nspec: {unschedulable: %s}\n"
                "status: {allocatable: {cpu: '1', memory: 1Gi, pods: '10'}%s}\n"
                % (name, "true" if cordoned else "false", conds))
    with TempDir() as t:
        t.write("nodes.yaml", n("a-ready", "True") + n("b-false", "False") + n("c-unknown", "Unknown")
                + n("d-none", None) + n("e-cordoned", "True", cordoned=True))
        p = gpusched("nodes", "-f", t.path)
        expect_exit(p, 0, "nodes")
        got = [line.split()[:2] for line in p.stdout.splitlines()[1:]]
        util.check_eq(got, [["a-ready", "Ready"], ["b-false", "NotReady"], ["c-unknown", "NotReady"],
                            ["d-none", "Unknown"], ["e-cordoned", "Ready,SchedulingDisabled"]],
                      "STATUS column")
        t.write("nodes.yaml", "apiVersion: v1\nkind: Node\nmetadata: {name: x}\n"
                "status: {conditions: [{type: Ready, status: true}]}\n")
        p = gpusched("nodes", "-f", t.path)
        expect_exit(p, 1, "a condition status that is not a string")
        util.check_eq(p.stderr.strip(), "gpusched: %s: line 4: json: cannot unmarshal bool into "
                      "Go struct field NodeCondition.status.conditions.status of type "
                      "v1.ConditionStatus" % os.path.join(t.path, "nodes.yaml"), "error")


def test_nodes_bad_selector_is_one_line_exit_1():
    for sel in ("a in (b", "a=b=c", "!a=b", "a notin b"):
        p = gpusched("nodes", "-f", SEED, "-l", sel)
        expect_exit(p, 1, "-l " + sel)
        line = one_error_line(p, "-l " + sel)
        if not line.startswith('gpusched: selector "%s": ' % sel):
            raise AssertionError("-l %s: %r" % (sel, line))


# --- simulate ----------------------------------------------------------------------------

def test_simulate_seed_json():
    p = gpusched("simulate", "-f", SEED, "-o", "json")
    expect_exit(p, 0, "simulate")
    util.check_eq(p.stderr, "", "stderr")
    doc = json.loads(p.stdout)
    util.check_eq(sorted(doc), ["scheduled", "unschedulable"], "keys")
    nodes = {e["pod"]: e["node"] for e in doc["scheduled"]}
    util.check_eq(nodes.get("default/not-in-gpu-node"), WORKER, "not-in-gpu-node")
    tf = [e for e in doc["scheduled"] if e["pod"].startswith("default/tf-notebook-")]
    util.check_eq(len(tf), 1, "tf-notebook pods")
    if tf[0]["node"] not in M40:
        raise AssertionError("tf-notebook on %s, want a Tesla-M40 node" % tf[0]["node"])
    util.check_eq(doc["unschedulable"], [], "unschedulable")


def test_simulate_seed_table():
    p = gpusched("simulate", "-f", SEED)
    expect_exit(p, 0, "simulate")
    lines = p.stdout.splitlines()
    util.check_eq(lines[0].split(), ["NAMESPACE", "NAME", "STATUS", "NODE"], "header")
    rows = {l.split()[1]: l.split() for l in lines[1:-2]}
    util.check_eq(rows["not-in-gpu-node"], ["default", "not-in-gpu-node", "Scheduled", WORKER], "row")
    util.check_eq(lines[-2:], ["", "2 scheduled, 0 pending, 0 preempted"], "summary line")


def test_simulate_three_replicas_message_and_events():
    with TempDir() as t:
        d = seed_with_replicas(t, 3)
        p = gpusched("simulate", "-f", d, "-o", "json")
        expect_exit(p, 0, "simulate")
        doc = json.loads(p.stdout)
        util.check_eq(sorted(e["node"] for e in doc["scheduled"]), sorted(M40 + [WORKER]), "nodes")
        util.check_eq(len(doc["unschedulable"]), 1, "unschedulable")
        util.check_eq(doc["unschedulable"][0]["message"], THIRD_REPLICA, "message")
        pending = doc["unschedulable"][0]["pod"]
        p = gpusched("simulate", "-f", d)
        expect_exit(p, 0, "simulate table")
        if ("Events for %s:" % pending) not in p.stdout:
            raise AssertionError("no events block for %s in %r" % (pending, p.stdout))
        want = "  Warning  FailedScheduling  " + THIRD_REPLICA
        if want not in p.stdout.splitlines():
            raise AssertionError("no FailedScheduling line in %r" % p.stdout)
        row = [l.split() for l in p.stdout.splitlines() if pending.split("/")[1] in l.split()][0]
        util.check_eq(row, ["default", pending.split("/")[1], "Pending", "<none>"], "pending row")
        p = gpusched("simulate", "-f", d, "-o", "wide")
        expect_exit(p, 0, "simulate wide")
        util.check_eq(p.stdout.splitlines()[0].split(),
                      ["NAMESPACE", "NAME", "STATUS", "NODE", "NOMINATED", "NODE", "PRIORITY"], "wide header")


def test_simulate_is_deterministic_and_seeded():
    with TempDir() as t:
        t.write("nodes.yaml", "---\n".join(NODE % ("node-%02d" % i) for i in range(12)))
        t.write("pods.yaml", "---\n".join(POD % ("pod-%02d" % i) for i in range(30)))
        outs = set()
        for _ in range(3):
            p = gpusched("simulate", "-f", t.path, "-o", "json", "--seed", "7")
            expect_exit(p, 0, "simulate --seed 7")
            outs.add(p.stdout)
        util.check_eq(len(outs), 1, "distinct outputs with the same seed")
        a = gpusched("simulate", "-f", t.path, "-o", "json").stdout
        b = gpusched("simulate", "-f", t.path, "-o", "json", "--seed", "1").stdout
        util.check_eq(a, b, "default seed is 1")
        doc = json.loads(a)
        util.check_eq(len(doc["scheduled"]), 30, "all scheduled")
        # 12 equal nodes, 30 equal pods: LeastAllocated spreads them, 2 or 3 per node
        per = {}
        for e in doc["scheduled"]:
            per[e["node"]] = per.get(e["node"], 0) + 1
        util.check_eq(sorted(set(per.values())), [2, 3], "spread")


def test_simulate_reads_stdin_and_file_lists():
    nodes = NODE % "n1"
    with TempDir() as t:
        pods = t.write("pods.yaml", POD % "p1")
        other = t.write("more.yaml", POD % "p2")
        p = gpusched("simulate", "-f", "-", "-f", pods + "," + other, "-o", "json", input=nodes)
        expect_exit(p, 0, "stdin")
        util.check_eq(json.loads(p.stdout),
                      {"scheduled": [{"pod": "default/p1", "node": "n1"},
                                     {"pod": "default/p2", "node": "n1"}], "unschedulable": []},
                      "json")


def test_no_objects_is_an_error():
    """kubectl create -f on input without an object says "error: no objects passed to create"
    and exits 1; every gpusched command taking -f says the same in its own name, rather than
    "0 scheduled" on what is most likely the wrong file."""
    with TempDir() as t:
        empty = t.write("empty.yaml", "")
        comments = t.write("comments.yaml", "# nothing here\n---\n---\n")
        emptylist = t.write("list.json", '{"apiVersion": "v1", "kind": "List", "items": []}')
        os.mkdir(os.path.join(t.path, "dir"))
        t.write("dir/a.yaml", "---\n")
        node = t.write("node.yaml", NODE % "n1")
        for cmd, extra in (("simulate", []), ("explain", ["p"]), ("nodes", []), ("render", []),
                           ("capacity", []), ("report", [])):
            for args, inp in ((["-f", empty], None), (["-f", comments], None), (["-f", emptylist], None),
                              (["-f", os.path.join(t.path, "dir")], None), (["-f", "-"], ""),
                              (["-f", empty, "-f", comments], None)):
                p = gpusched(cmd, *args, *extra, input=inp)
                what = "%s %s" % (cmd, " ".join(args))
                expect_exit(p, 1, what)
                line = one_error_line(p, what)
                if not line.startswith("gpusched: no objects passed to %s (-f " % cmd):
                    raise AssertionError("%s: %r" % (what, line))
                util.check_eq(p.stdout, "", what + ": stdout")
            # one object anywhere in the -f files is enough
            p = gpusched(cmd, "-f", empty, "-f", node, *extra)
            if "no objects passed" in p.stderr:
                raise AssertionError("%s with a node: %r" % (cmd, p.stderr))


def test_simulate_no_pending_pods():
    p = gpusched("simulate", "-f", "-", input=NODE % "n1")
    expect_exit(p, 0, "no pods")
    util.check_eq(p.stdout, "No pending pods.\n", "stdout")
    p = gpusched("simulate", "-f", "-", "-o", "json", input=NODE % "n1")
    util.check_eq(p.stdout, '{"scheduled":[],"unschedulable":[]}\n', "json")


# --- explain -----------------------------------------------------------------------------

def test_explain_seed_pod():
    for arg in ("not-in-gpu-node", "default/not-in-gpu-node", "pod/not-in-gpu-node"):
        p = gpusched("explain", "-f", SEED, arg)
        expect_exit(p, 0, "explain " + arg)
        out = p.stdout
        for m in MASTERS:
            if not re.search(r"^%s\s+TaintToleration\s+%s" % (re.escape(m), re.escape(MASTER_TAINT)), out, re.M):
                raise AssertionError("master %s not rejected by its taint in %r" % (m, out))
        for g in M40:
            if not re.search(r"^%s\s+NodeAffinity\s+node\(s\) didn't match Pod's node affinity/selector$" % re.escape(g), out, re.M):
                raise AssertionError("%s not rejected by affinity in %r" % (g, out))
        if not re.search(r"^%s\s+passed" % re.escape(WORKER), out, re.M):
            raise AssertionError("worker not feasible in %r" % out)
        if ("Result: scheduled on %s\n" % WORKER) not in out:
            raise AssertionError("no result line in %r" % out)


def test_simulate_sampling_under_100_nodes_changes_nothing():
    """Under 100 nodes kube-scheduler's sampling filters every node: same placement."""
    for d in (SEED,):
        want = gpusched("simulate", "-f", d, "-o", "json").stdout
        for pct in ("0", "1", "50", "100"):
            p = gpusched("simulate", "-f", d, "-o", "json", "--percentage-of-nodes-to-score", pct)
            expect_exit(p, 0, "simulate --percentage-of-nodes-to-score " + pct)
            util.check_eq(p.stdout, want, "output with --percentage-of-nodes-to-score " + pct)


def test_explain_with_sampling_marks_nodes_not_evaluated():
    with TempDir() as t:
        # 150 equal nodes: the adaptive share is 49% (73), so 100 feasible nodes end the cycle
        t.write("nodes.yaml", "---\n".join(NODE % ("node-%03d" % i) for i in range(150)))
        t.write("pods.yaml", "---\n".join(POD % ("pod-%d" % i) for i in range(3)) + "---\n" + """apiVersion: v1
kind: Pod
metadata: {name: huge}
spec:
  containers: [{name: c, image: app, resources: {requests: {cpu: "8"}}}]
""")
        p = gpusched("explain", "-f", t.path, "pod-2", "-o", "json")
        doc = json.loads(p.stdout)
        util.check_eq(len([n for n in doc["nodes"] if n.get("feasible")]), 150, "every node at 100")
        util.check_eq("percentageOfNodesToScore" in doc, False, "no percentage at 100")
        p = gpusched("explain", "-f", t.path, "pod-2", "-o", "json",
                     "--percentage-of-nodes-to-score", "0")
        expect_exit(p, 0, "explain --percentage-of-nodes-to-score 0")
        doc = json.loads(p.stdout)
        util.check_eq(doc["percentageOfNodesToScore"], 0, "percentage in the JSON")
        skipped = [n for n in doc["nodes"] if n.get("evaluated") is False]
        feasible = [n for n in doc["nodes"] if n.get("feasible")]
        util.check_eq((len(skipped), len(feasible)), (50, 100), "not evaluated, feasible")
        util.check_eq(skipped[0], {"node": skipped[0]["node"], "evaluated": False}, "a skipped row")
        # pods 0 and 1 went first, 100 nodes each: pod-2 starts at (0 + 100 + 100) % 150 = 50
        util.check_eq([n["node"] for n in feasible], ["node-%03d" % i for i in range(50, 150)],
                      "filtered")
        util.check_eq([n["node"] for n in skipped], ["node-%03d" % i for i in range(50)],
                      "not evaluated")
        util.check_eq(doc["result"]["node"] in [n["node"] for n in feasible], True, "chosen among the filtered")
        p = gpusched("explain", "-f", t.path, "pod-2", "--percentage-of-nodes-to-score", "0")
        expect_exit(p, 0, "explain table")
        if "Nodes passing the filters: 100 of 150 (50 not evaluated" not in p.stdout:
            raise AssertionError("summary line: %r" % p.stdout[:600])
        # a pod that fits nowhere: every node filtered, the full message
        p = gpusched("explain", "-f", t.path, "huge", "-o", "json", "--percentage-of-nodes-to-score", "0")
        doc = json.loads(p.stdout)
        util.check_eq([n for n in doc["nodes"] if "evaluated" in n], [], "no skipped node")
        if not doc["result"]["message"].startswith("0/150 nodes are available: 150 Insufficient cpu."):
            raise AssertionError("message %r" % doc["result"]["message"])


def test_explain_json_and_third_replica():
    with TempDir() as t:
        d = seed_with_replicas(t, 3)
        sim = json.loads(gpusched("simulate", "-f", d, "-o", "json").stdout)
        pending = sim["unschedulable"][0]["pod"]
        p = gpusched("explain", "-f", d, pending, "-o", "json")
        expect_exit(p, 0, "explain -o json")
        doc = json.loads(p.stdout)
        util.check_eq(doc["pod"], pending, "pod")
        util.check_eq(doc["podsAhead"], 3, "pods ahead")
        util.check_eq(doc["result"]["status"], "Unschedulable", "status")
        util.check_eq(doc["result"]["message"], THIRD_REPLICA, "message")
        by = {n["node"]: n for n in doc["nodes"]}
        util.check_eq(sorted(by), sorted(MASTERS + M40 + [WORKER]), "nodes")
        for m in MASTERS:
            util.check_eq((by[m]["plugin"], by[m]["reasons"], by[m]["unresolvable"]),
                          ("TaintToleration", [MASTER_TAINT], True), m)
            util.check_eq(by[m].get("preemption"), "Preemption is not helpful for scheduling", m)
        for g in M40:
            util.check_eq((by[g]["plugin"], by[g]["reasons"], by[g]["unresolvable"]),
                          ("NodePorts", ["node(s) didn't have free ports for the requested pod ports"], False), g)
            util.check_eq(by[g].get("preemption"), "No preemption victims found for incoming pod", g)
        util.check_eq(by[WORKER]["plugin"], "NodeAffinity", "worker")
        # the scheduled replica: same node as simulate, every default plugin scored
        first = sim["scheduled"][1]
        p = gpusched("explain", "-f", d, first["pod"], "-o", "json")
        doc = json.loads(p.stdout)
        util.check_eq(doc["result"], {"status": "Scheduled", "node": first["node"]}, "result")
        feasible = [n for n in doc["nodes"] if n["feasible"]]
        util.check_eq(sorted(n["node"] for n in feasible), sorted(M40), "feasible")
        # (a Deployment's pods get PodTopologySpread's system default spreading)
        util.check_eq([s["plugin"] for s in feasible[0]["scores"]],
                      ["TaintToleration", "NodeAffinity", "NodeResourcesFit",
                       "NodeResourcesBalancedAllocation", "PodTopologySpread", "InterPodAffinity",
                       "ImageLocality"],
                      "plugins")
        for n in feasible:
            util.check_eq(n["total"], sum(s["weighted"] for s in n["scores"]), "total")
            for s in n["scores"]:
                util.check_eq(s["weighted"], s["weight"] * s["normalized"], "weighted")


def test_explain_errors():
    p = gpusched("explain", "-f", SEED, "nope")
    expect_exit(p, 1, "explain nope")
    util.check_eq(one_error_line(p, "not found"),
                  'gpusched: pods "nope" not found in namespace "default"', "stderr")
    with TempDir() as t:
        t.write("a.yaml", NODE % "n1" + "---\n" + """apiVersion: v1
kind: Pod
metadata: {name: bound}
spec:
  nodeName: n1
  containers: [{name: c, image: app}]
""")
        p = gpusched("explain", "-f", t.path, "bound")
        expect_exit(p, 1, "explain bound")
        one_error_line(p, "bound pod")


# --- bad input ---------------------------------------------------------------------------

def test_bad_yaml_names_file_and_line():
    with TempDir() as t:
        f = t.write("bad.yaml", "apiVersion: v1\nkind: Pod\nmetadata:\n  name: x\n  labels: a: b\n")
        for cmd in ("simulate", "nodes"):
            p = gpusched(cmd, "-f", f)
            expect_exit(p, 1, cmd + " on bad YAML")
            line = one_error_line(p, "bad YAML")
            if not re.match(r"^gpusched: %s: line 5: " % re.escape(f), line):
                raise AssertionError("bad YAML: %r" % line)


def test_bad_quantity_names_field():
    with TempDir() as t:
        f = t.write("q.yaml", """apiVersion: v1
kind: Pod
metadata: {name: x}
spec:
  containers:
  - name: c
    image: app
    resources:
      requests:
        cpu: 2 cores
""")
        p = gpusched("simulate", "-f", f)
        expect_exit(p, 1, "bad quantity")
        line = one_error_line(p, "bad quantity")
        want = "gpusched: %s: line 10: spec.containers[0].resources.requests.cpu: " % f
        if not line.startswith(want) or "quantities must match the regular expression" not in line:
            raise AssertionError("bad quantity: %r" % line)


def test_missing_file():
    p = gpusched("simulate", "-f", "/nonexistent/x.yaml")
    expect_exit(p, 1, "missing file")
    line = one_error_line(p, "missing file")
    if "/nonexistent/x.yaml" not in line:
        raise AssertionError(line)


def test_unknown_kind_is_a_warning():
    with TempDir() as t:
        f = t.write("cm.yaml", NODE % "n1" + "---\n" + """apiVersion: v1
kind: ConfigMap
metadata: {name: web}
data: {a: b}
""")
        p = gpusched("simulate", "-f", f, "-o", "json")
        expect_exit(p, 0, "unknown kind")
        util.check_eq(p.stderr, "gpusched: warning: %s: line 7: skipping kind ConfigMap\n" % f, "stderr")
        util.check_eq(json.loads(p.stdout), {"scheduled": [], "unschedulable": []}, "stdout")


def test_pod_being_deleted_is_left_out_with_a_warning():
    """kube-scheduler skips a pending pod with a deletionTimestamp ("Skip schedule deleting
    pod"): simulate leaves it out and says so."""
    with TempDir() as t:
        f = t.write("del.yaml", NODE % "n1" + "---\n" + """apiVersion: v1
kind: Pod
metadata: {name: going, deletionTimestamp: "2026-01-01T00:00:00Z"}
spec: {containers: [{name: c, image: x}]}
---
apiVersion: v1
kind: Pod
metadata: {name: staying}
spec: {containers: [{name: c, image: x}]}
""")
        p = gpusched("simulate", "-f", f, "-o", "json")
        expect_exit(p, 0, "a pod being deleted")
        util.check_eq(p.stderr, "gpusched: warning: pod default/going has a deletionTimestamp: "
                      "kube-scheduler does not schedule a pod being deleted; left out\n", "stderr")
        util.check_eq(json.loads(p.stdout), {"scheduled": [{"pod": "default/staying", "node": "n1"}],
                                             "unschedulable": []}, "stdout")


def test_missing_priority_class_keeps_a_set_priority():
    """A pod dumped from a cluster whose PriorityClass is gone keeps its spec.priority (what
    kube-scheduler reads); without spec.priority the class is still required."""
    with TempDir() as t:
        body = """apiVersion: v1
kind: Pod
metadata: {name: dumped}
spec:
  nodeName: n1
  priorityClassName: gone
%s  containers: [{name: c, image: x, resources: {requests: {cpu: "4"}}}]
---
apiVersion: v1
kind: Pod
metadata: {name: newcomer}
spec:
  priority: 500
  containers: [{name: c, image: x, resources: {requests: {cpu: "4"}}}]
"""
        f = t.write("prio.yaml", NODE % "n1" + "---\n" + body % "  priority: 1000\n")
        p = gpusched("simulate", "-f", f, "-o", "json")
        expect_exit(p, 0, "a missing class with spec.priority")
        util.check_eq(p.stderr, "gpusched: warning: %s: line 6: pod default/dumped: no PriorityClass "
                      "with name gone was found; keeping its spec.priority 1000\n" % f, "stderr")
        # priority 1000 kept: the newcomer (500) cannot preempt it
        out = json.loads(p.stdout)
        util.check_eq([u["pod"] for u in out["unschedulable"]], ["default/newcomer"], "unschedulable")
        g = t.write("noprio.yaml", NODE % "n1" + "---\n" + body % "")
        p = gpusched("simulate", "-f", g, "-o", "json")
        expect_exit(p, 1, "a missing class without spec.priority")
        util.check_eq(one_error_line(p, "missing class"), "gpusched: %s: line 6: spec.priorityClassName: "
                      "no PriorityClass with name gone was found" % g, "error")


def test_service_is_read_for_spreading():
    """A Service is read (its selector drives the default topology spreading), silently;
    a pod it selects gets the PodTopologySpread score, one it does not select none."""
    with TempDir() as t:
        f = t.write("svc.yaml", NODE % "n1" + "---\n" + NODE % "n2" + "---\n" + """apiVersion: v1
kind: Service
metadata: {name: web}
spec: {selector: {app: web}, ports: [{port: 80}]}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, labels: {app: web}}
spec: {containers: [{name: c, image: web}]}
---
apiVersion: v1
kind: Pod
metadata: {name: other, labels: {app: other}}
spec: {containers: [{name: c, image: other}]}
""")
        p = gpusched("simulate", "-f", f, "-o", "json")
        expect_exit(p, 0, "service")
        util.check_eq(p.stderr, "", "stderr")
        for pod, want in (("web-0", True), ("other", False)):
            x = json.loads(gpusched("explain", "-f", f, pod, "-o", "json").stdout)
            plugins = {s["plugin"] for n in x["nodes"] for s in n.get("scores", [])}
            util.check_eq("PodTopologySpread" in plugins, want, pod)


def test_wrong_field_type_names_line_and_field():
    with TempDir() as t:
        f = t.write("t.yaml", "apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  containers: {name: c}\n")
        p = gpusched("simulate", "-f", f)
        expect_exit(p, 1, "wrong type")
        line = one_error_line(p, "wrong type")
        # the API server's decoder's words: Go's struct, the field's JSON path and Go type
        util.check_eq(line, "gpusched: %s: line 5: json: cannot unmarshal object into Go struct "
                      "field PodSpec.spec.containers of type []v1.Container" % f, "wrong type")


def test_unknown_fields_warn_and_strict_fails():
    # kubectl's strict field validation: a misspelled field is a warning, with --strict an
    # error, for every command that reads -f
    node = "apiVersion: v1\nkind: Node\nmetadata: {name: n1}\nstatus:\n  allocatable: {cpu: 4, pods: 9}\n"
    pod = ("apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec:\n  nodeSelectr: {gpu: \"y\"}\n"
           "  containers: [{name: c, image: i}]\n")
    with TempDir() as t:
        f = t.write("t.yaml", node + "---\n" + pod)
        warning = "gpusched: warning: %s: line 11: unknown field \"spec.nodeSelectr\"" % f
        for cmd in (["simulate"], ["explain", "pod/x"], ["nodes"], ["render"], ["report"],
                    ["capacity"]):
            p = gpusched(*cmd, "-f", f)
            expect_exit(p, 0, " ".join(cmd))
            if warning not in p.stderr.splitlines():
                raise AssertionError("%s: no warning in %r" % (cmd[0], p.stderr))
            p = gpusched(*cmd, "--strict", "-f", f)
            expect_exit(p, 1, cmd[0] + " --strict")
            util.check_eq(one_error_line(p, cmd[0]), "gpusched: %s: line 11: strict decoding "
                          "error: unknown field \"spec.nodeSelectr\"" % f, cmd[0] + " --strict")
        g = t.write("d.yaml", node + "  allocatable: {cpu: 2}\n")
        p = gpusched("nodes", "--strict", "-f", g)
        expect_exit(p, 1, "duplicate key")
        util.check_eq(one_error_line(p, "duplicate key"),
                      "gpusched: %s: line 6: key \"allocatable\" already set in map" % g,
                      "duplicate key")


def test_stdout_is_only_the_result():
    """Warnings and progress go to stderr: stdout of -o json parses as one document."""
    with TempDir() as t:
        t.write("a.yaml", NODE % "n1" + "---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n"
                + "---\n" + POD % "p1")
        p = gpusched("simulate", "-f", t.path, "-o", "json")
        expect_exit(p, 0, "simulate")
        util.check_eq(json.loads(p.stdout), {"scheduled": [{"pod": "default/p1", "node": "n1"}],
                                             "unschedulable": []}, "stdout")
        if "skipping kind ConfigMap" not in p.stderr:
            raise AssertionError("no warning on stderr: %r" % p.stderr)


def test_explain_gated_pod_and_empty_cluster():
    gates = os.path.join(util.SRC, "tests", "scenarios", "json-input-and-gates", "cluster.json")
    p = gpusched("explain", "-f", gates, "batch/gated", "-o", "json")
    expect_exit(p, 0, "explain gated")
    util.check_eq(json.loads(p.stdout)["result"], {"status": "SchedulingGated"}, "gated")
    p = gpusched("explain", "-f", "-", "lonely", input=POD % "lonely")
    expect_exit(p, 0, "explain without nodes")
    if "FailedScheduling: no nodes available to schedule pods\n" not in p.stdout:
        raise AssertionError(p.stdout)


def test_namespace_flag():
    p = gpusched("simulate", "-f", SEED, "-n", "ml", "-o", "json")
    expect_exit(p, 0, "simulate -n ml")
    pods = [e["pod"] for e in json.loads(p.stdout)["scheduled"]]
    util.check_eq(sorted(p.split("/")[0] for p in pods), ["ml", "ml"], "namespaces")
    p = gpusched("explain", "-f", SEED, "--namespace=ml", "not-in-gpu-node", "-o", "json")
    expect_exit(p, 0, "explain -n ml")
    util.check_eq(json.loads(p.stdout)["pod"], "ml/not-in-gpu-node", "pod")
    p = gpusched("explain", "-f", SEED, "not-in-gpu-node", "-n", "ml")
    expect_exit(p, 0, "explain NAME -n ml")
    p = gpusched("explain", "-f", SEED, "-n", "ml", "default/not-in-gpu-node")
    expect_exit(p, 1, "explain default/NAME -n ml")


def test_explain_agrees_with_simulate_on_every_scenario_pod():
    """explain runs one simulation (the queue up to the pod, the pod taken back off its node)
    and must say what simulate says for every pod of every scenario, preemptions included."""
    sdir = os.path.join(util.SRC, "tests", "scenarios")
    checked = 0
    for name in sorted(os.listdir(sdir)):
        d = os.path.join(sdir, name)
        if not os.path.isdir(d):
            continue
        args = []
        for f in sorted(os.listdir(d)):
            if f.endswith((".yaml", ".yml", ".json")) and f != "expected.json":
                args += ["-f", os.path.join(d, f)]
        if os.path.exists(os.path.join(d, "args")):
            with open(os.path.join(d, "args")) as fh:
                args += [a for a in fh.read().split() if a not in ("-o", "wide")]
        p = gpusched("simulate", *args, "-o", "json")
        if p.returncode:
            continue
        doc = json.loads(p.stdout)
        want = {}
        for e in doc["scheduled"]:
            want[e["pod"]] = ("Scheduled", e["node"])
        for e in doc["unschedulable"]:
            want[e["pod"]] = ("Unschedulable", e.get("message"))
        for e in doc.get("preempted", []):
            want.pop(e["pod"], None)  # placed, then evicted by a later pod: explain says placed
        for pod, (status, what) in want.items():
            x = json.loads(gpusched("explain", *args, pod, "-o", "json").stdout)["result"]
            st = x["status"]
            if st == "Error" and x.get("message", "").startswith("running "):
                # the attempt failed with a plugin's error (a Filter's, a PreBind's): simulate
                # lists it so
                st = "Unschedulable"
            got = ("Scheduled" if st.startswith("Scheduled") else st,
                   x.get("node") if status == "Scheduled" else x.get("message"))
            util.check_eq(got, (status, what), "%s %s" % (name, pod))
            checked += 1
    if checked < 100:
        raise AssertionError("only %d pods checked" % checked)


CONFIG_CASE = os.path.join(util.SRC, "tests", "scenarios", "config-two-profiles-gpu")


def test_config_explain_uses_the_pods_profile():
    gs = util.binary("gpusched")
    args = ["-f", os.path.join(CONFIG_CASE, "cluster.yaml"), "-f", os.path.join(CONFIG_CASE, "pods.yaml"),
            "--config", os.path.join(CONFIG_CASE, "scheduler.conf")]
    p = util.run([gs, "explain"] + args + ["pod/pack-a", "-o", "json"])
    util.check_eq(p.returncode, 0, "exit status: %s" % p.stderr)
    x = json.loads(p.stdout)
    util.check_eq(x["profile"], "binpack", "profile")
    nodes = {n["node"]: {s["plugin"]: s for s in n["scores"]} for n in x["nodes"]}
    # MostAllocated over nvidia.com/gpu:10, cpu:1 at weight 5; BalancedAllocation disabled
    util.check_eq((nodes["g1"]["NodeResourcesFit"]["raw"], nodes["g1"]["NodeResourcesFit"]["weight"]),
                  (57, 5), "g1 NodeResourcesFit")
    util.check_eq(nodes["g2"]["NodeResourcesFit"]["raw"], 11, "g2 NodeResourcesFit")
    if "NodeResourcesBalancedAllocation" in nodes["g1"]:
        raise AssertionError("a disabled plugin is scored: %r" % nodes["g1"])
    p = util.run([gs, "explain"] + args + ["pod/spread-a", "-o", "json"])
    x = json.loads(p.stdout)
    util.check_eq(x["profile"], "spread", "profile of spread-a")
    # the pod of no profile's schedulerName takes the first
    p = util.run([gs, "explain"] + args + ["pod/other", "-o", "json"])
    util.check_eq(json.loads(p.stdout)["profile"], "binpack", "profile of other")


def test_config_errors_are_one_line_exit_2():
    gs = util.binary("gpusched")
    tmp = tempfile.mkdtemp(prefix="gpusched-config-")
    cfg = os.path.join(tmp, "sched.yaml")
    nodes = os.path.join(CONFIG_CASE, "cluster.yaml")
    for text, extra, want in (
            ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n"
             "profiles:\n- schedulerName: a\n  plugin: {}\n", [],
             cfg + ": line 5: profiles[0].plugin: unknown field \"plugin\""),
            ("apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n", ["--profile", "gpu"],
             "--profile and --config cannot be used together"),
            ("kind: [", [], cfg + ": line 2: did not find expected node content"),
            (None, [], os.path.join(tmp, "absent.yaml") + ": cannot read the scheduler configuration")):
        path = cfg
        if text is None:
            path = os.path.join(tmp, "absent.yaml")
        else:
            with open(cfg, "w") as f:
                f.write(text)
        for cmd in ("simulate", "explain"):
            argv = [gs, cmd, "-f", nodes, "--config", path] + extra
            if cmd == "explain":
                argv.append("pod/train")
            p = util.run(argv)
            util.check_eq(p.returncode, 2, "%s exit status for %r: %s" % (cmd, want, p.stderr))
            if want not in p.stderr or len(p.stderr.strip().splitlines()) > 2:
                raise AssertionError("%s stderr: %r, want %r" % (cmd, p.stderr, want))


GPU_PROFILE_CONFIG = """apiVersion: kubescheduler.config.k8s.io/v1
kind: KubeSchedulerConfiguration
percentageOfNodesToScore: 100
profiles:
- schedulerName: gpu
  plugins:
    score:
      enabled:
      - {name: GPUPlacement, weight: 10}
"""


def test_profile_gpu_is_the_documented_configuration():
    """docs/gpusched.md: --profile gpu equals this KubeSchedulerConfiguration, in simulate's
    answers and in every pod's explanation, on every scenario that uses --profile gpu."""
    gs = util.binary("gpusched")
    tmp = tempfile.mkdtemp(prefix="gpusched-config-")
    cfg = os.path.join(tmp, "gpu.yaml")
    with open(cfg, "w") as f:
        f.write(GPU_PROFILE_CONFIG)
    root = os.path.join(util.SRC, "tests", "scenarios")
    seen = 0
    for name in sorted(os.listdir(root)):
        d = os.path.join(root, name)
        args_path = os.path.join(d, "args")
        if not os.path.exists(args_path) or open(args_path).read().split() != ["--profile", "gpu"]:
            continue
        seen += 1
        files = []
        for f in sorted(os.listdir(d)):
            if f.endswith((".yaml", ".yml", ".json")) and f != "expected.json":
                files += ["-f", os.path.join(d, f)]
        a = util.run([gs, "simulate"] + files + ["--profile", "gpu", "-o", "json"])
        b = util.run([gs, "simulate"] + files + ["--config", cfg, "-o", "json"])
        util.check_eq(b.stdout, a.stdout, "%s: simulate" % name)
        doc = json.loads(a.stdout)
        for r in doc["scheduled"] + doc["unschedulable"]:
            pod = "pod/" + r["pod"].split("/")[1]
            ns = r["pod"].split("/")[0]
            a = util.run([gs, "explain"] + files + ["-n", ns, "--profile", "gpu", pod, "-o", "wide"])
            b = util.run([gs, "explain"] + files + ["-n", ns, "--config", cfg, pod, "-o", "wide"])
            util.check_eq((a.returncode, b.returncode), (0, 0), "%s: explain %s exit" % (name, pod))
            util.check_eq(b.stdout, a.stdout, "%s: explain %s" % (name, pod))
    if seen < 2:
        raise AssertionError("only %d scenarios use --profile gpu" % seen)

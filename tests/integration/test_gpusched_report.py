"""`gpusched report`: the HTML page rendered by headless Chromium (Debian's chromium package,
scripts/install-deps), and what the rendered page shows checked against the input: GPUs per
node grouped by model, the pending pods grouped by reason, the stranded GPUs."""
import html.parser
import json
import os
import shutil
import subprocess
import tempfile

import util

_tmp = tempfile.mkdtemp(prefix="gpusched-report-")


def node(name, gpus, product):
    alloc = {"cpu": "32", "memory": "256Gi", "pods": "110", "nvidia.com/gpu": str(gpus)}
    return {"apiVersion": "v1", "kind": "Node",
            "metadata": {"name": name, "labels": {"nvidia.com/gpu.product": product}},
            "status": {"allocatable": alloc, "capacity": alloc}}


def pod(name, gpus, node_name=None):
    p = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
         "spec": {"containers": [{"name": "c", "image": "x",
                                  "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}]}}
    if node_name:
        p["spec"]["nodeName"] = node_name
    return p


class Text(html.parser.HTMLParser):
    """The text of the rendered DOM, by element id and by tag."""

    def __init__(self):
        super().__init__()
        self.stack, self.by_id, self.h3, self.rows = [], {}, [], []
        self.row = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self.stack.append((tag, a.get("id"), []))
        if tag == "tr":
            self.row = []

    def handle_endtag(self, tag):
        while self.stack:
            t, i, parts = self.stack.pop()
            text = "".join(parts).strip()
            if self.stack:
                self.stack[-1][2].append("".join(parts))
            if i:
                self.by_id[i] = text
            if t == "h3":
                self.h3.append(text)
            if t in ("td", "th") and self.row is not None:
                self.row.append(text)
            if t == "tr" and self.row is not None:
                self.rows.append(self.row)
                self.row = None
            if t == tag:
                break

    def handle_data(self, data):
        if self.stack:
            self.stack[-1][2].append(data)


def chromium():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    raise AssertionError("no chromium on PATH: scripts/install-deps installs Debian's chromium")


def render(path):
    """The DOM after Chromium has loaded and laid out the page (no network: a file URL)."""
    p = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--user-data-dir=" + os.path.join(_tmp, "profile"),
                        "--dump-dom", "file://" + path],
                       capture_output=True, text=True, timeout=120)
    if p.returncode != 0 or "<html" not in p.stdout:
        raise AssertionError("chromium: exit %d: %s" % (p.returncode, p.stderr[-800:]))
    shot = os.path.join(_tmp, "page.png")
    s = subprocess.run([chromium(), "--headless", "--no-sandbox", "--disable-gpu",
                        "--user-data-dir=" + os.path.join(_tmp, "profile"),
                        "--screenshot=" + shot, "--window-size=1200,900", "file://" + path],
                       capture_output=True, text=True, timeout=120)
    if s.returncode != 0 or not os.path.exists(shot) or os.path.getsize(shot) < 1000:
        raise AssertionError("chromium --screenshot: exit %d: %s" % (s.returncode, s.stderr[-800:]))
    t = Text()
    t.feed(p.stdout)
    return t


def test_report_rendered_in_chromium():
    objs = [node("a100-1", 8, "NVIDIA-A100-SXM4-80GB"), node("a100-2", 8, "NVIDIA-A100-SXM4-80GB"),
            node("t4-1", 1, "Tesla-T4"),
            pod("train-a", 6, "a100-1"), pod("train-b", 5, "a100-2"),
            pod("want-8", 8), pod("want-8b", 8), pod("want-3", 3)]
    src = os.path.join(_tmp, "cluster.json")
    with open(src, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f)
    page = os.path.join(_tmp, "report.html")
    p = util.run([util.binary("gpusched"), "report", "-f", src, "--out", page])
    util.check_eq((p.returncode, p.stdout, p.stderr), (0, "", ""), "report")
    t = render(page)
    util.check_eq(t.by_id["summary"], "17 nvidia.com/gpu on 3 nodes: 11 used, 6 free. 3 pending "
                  "pods (3 requesting GPUs), 1 of which fit now, placed together in queue order as "
                  "gpusched simulate places them.", "summary")
    util.check_eq(t.h3, ["NVIDIA-A100-SXM4-80GB \u2014 2 nodes, 16 GPUs, 11 used, 5 free",
                         "Tesla-T4 \u2014 1 nodes, 1 GPUs, 0 used, 1 free"], "models")
    rows = [r for r in t.rows if r and r[0] in ("a100-1", "a100-2", "t4-1") and len(r) == 5]
    util.check_eq([r[:4] for r in rows], [["a100-1", "8", "6", "2"], ["a100-2", "8", "5", "3"],
                                          ["t4-1", "1", "0", "1"]], "per node")
    pend = [r for r in t.rows if len(r) == 3 and r[0].isdigit()]
    # t4-1 has 1 GPU in all: evicting cannot help there
    util.check_eq(pend, [["2", "0/3 nodes are available: 3 Insufficient nvidia.com/gpu. "
                          "preemption: 0/3 nodes are available: 1 Preemption is not helpful for "
                          "scheduling, 2 No preemption victims found for incoming pod.",
                          "default/want-8"]], "pending by reason")
    # want-3 fits a100-2 (3 free); a100-1 (2 free) and t4-1 (1) take no pending GPU pod
    util.check_eq(t.by_id["fragmentation"], "3 free GPUs are stranded on 2 nodes where none of "
                  "the pending GPU pods fits.", "fragmentation")


def test_report_says_what_simulate_says():
    """The pending pods are placed together, as simulate places them: two 3-GPU pods where 3
    GPUs are free fit one at a time, not both (tried alone, each fitted: "2 of which fit
    now"); the second is in the table with simulate's message for it."""
    objs = [node("a100-1", 8, "NVIDIA-A100-SXM4-80GB"), node("a100-2", 8, "NVIDIA-A100-SXM4-80GB"),
            pod("train-a", 6, "a100-1"), pod("train-b", 5, "a100-2"),
            pod("want-3", 3), pod("want-3b", 3), pod("want-8", 8)]
    src = os.path.join(_tmp, "together.json")
    with open(src, "w") as f:
        json.dump({"apiVersion": "v1", "kind": "List", "items": objs}, f)
    page = os.path.join(_tmp, "together.html")
    p = util.run([util.binary("gpusched"), "report", "-f", src, "--out", page])
    util.check_eq((p.returncode, p.stderr), (0, ""), "report")
    sim = json.loads(util.run([util.binary("gpusched"), "simulate", "-f", src, "-o", "json"]).stdout)
    util.check_eq(len(sim["scheduled"]), 1, "simulate places one")
    t = Text()
    with open(page) as f:
        t.feed(f.read())
    util.check_eq(t.by_id["summary"], "16 nvidia.com/gpu on 2 nodes: 11 used, 5 free. 3 pending "
                  "pods (3 requesting GPUs), 1 of which fit now, placed together in queue order as "
                  "gpusched simulate places them.", "summary")
    pend = sorted((r[1], int(r[0])) for r in t.rows if len(r) == 3 and r[0].isdigit())
    want = {}
    for e in sim["unschedulable"]:
        want[e["message"]] = want.get(e["message"], 0) + 1
    util.check_eq(pend, sorted(want.items()), "the reasons are simulate's messages")
    # a100-2 has 3 free GPUs and a pending 3-GPU pod passes its filters there: not stranded
    util.check_eq(t.by_id["fragmentation"], "2 free GPUs are stranded on 1 nodes where none of "
                  "the pending GPU pods fits.", "fragmentation")


def test_report_bad_out_is_one_line():
    p = util.run([util.binary("gpusched"), "report", "-f", os.path.join(util.SRC, "examples", "seed"),
                  "--out", "/nonexistent-dir/x.html"])
    util.check_eq(p.returncode, 1, "exit")
    util.check_eq(p.stderr, "gpusched: cannot write '/nonexistent-dir/x.html': No such file or "
                  "directory\n", "stderr")
    p = util.run([util.binary("gpusched"), "report", "--out", ""])
    util.check_eq(p.returncode, 2, "empty --out")


def test_report_out_is_never_clobbered():
    """--out FILE is renamed into place only when the page is complete: a run whose input
    fails leaves FILE as it was, and a character device (/dev/stdout) is written, not replaced."""
    import select
    import stat
    import time
    d = tempfile.mkdtemp(prefix="gpusched-report-out-", dir=_tmp)
    out = os.path.join(d, "r.html")
    with open(out, "w") as f:
        f.write("yesterday's page")
    bad = os.path.join(d, "bad.yaml")
    with open(bad, "w") as f:
        f.write("apiVersion: v1\nkind: Node\nmetadata: {name: n}\nstatus: {allocatable: {cpu: lots}}\n")
    p = util.run([util.binary("gpusched"), "report", "-f", bad, "--out", out])
    util.check_eq(p.returncode, 1, "bad input")
    with open(out) as f:
        util.check_eq(f.read(), "yesterday's page", "FILE after a failed run")
    util.check_eq(sorted(os.listdir(d)), ["bad.yaml", "r.html"], "nothing left behind")
    # a FIFO (as /dev/stdout may be) with a reader: written in place, still a FIFO
    fifo = os.path.join(d, "fifo")
    os.mkfifo(fifo)
    rd = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)
    try:
        p = subprocess.Popen([util.binary("gpusched"), "report", "-f", os.path.join(util.SRC, "examples", "seed"),
                              "--out", fifo], stderr=subprocess.PIPE)
        got = b""
        while True:
            select.select([rd], [], [], 0.1)
            try:
                chunk = os.read(rd, 1 << 16)
            except BlockingIOError:
                chunk = None
            if chunk:
                got += chunk
            elif p.poll() is not None:
                break
            elif chunk == b"":
                time.sleep(0.05)  # no writer yet
        util.check_eq(p.wait(timeout=60), 0, "--out FIFO: %s" % p.stderr.read())
    finally:
        os.close(rd)
    util.check_eq(stat.S_ISFIFO(os.stat(fifo).st_mode), True, "still a FIFO")
    if not got.startswith(b"<!DOCTYPE html>") or not got.rstrip().endswith(b"</html>"):
        raise AssertionError("the reader got %r...%r" % (got[:40], got[-40:]))

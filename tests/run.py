#!/usr/bin/env python3
"""Run every test: C unit tests, fuzz-corpus replays and the Python integration suites.

Each suite reports one line per case ("ok NAME" or "FAIL NAME: why"); this runner prints them
and ends with the one summary line CI reads: "N passed, N failed".

  python3 tests/run.py --build build [--k8s build/k8s] [-k PATTERN] [-j JOBS]

Integration modules are tests/integration/test_*.py. A module defines functions named test_*
and/or a function cases() that yields (name, callable) pairs, e.g. one per fixture file, so a
new fixture needs no code. A case passes when it returns without raising. Modules run in
their own process (in parallel, -j) with the environment variables GPULABEL_BUILD and
GPULABEL_SRCDIR pointing at the build and source directories.

The modules named test_k8s_*.py run our binaries against the real kube-apiserver (a local
control plane per module, tests/integration/k8s_util.py). They need build/k8s/ (`make k8s`,
which needs Go); without it they are not run and one `skipped:` line says why.

A module whose first lines hold `# run.py: python PATH` runs under that interpreter when it
exists (Debian's python3-grpcio imports only under /usr/bin/python3). A module that sets
SKIP = "why" at import runs no case and is reported on one `skipped:` line.

A case marked with util.known_bug (a bug in src/ shown by a test, waiting for its fix) is
reported as `KNOWN-BUG name: why` and counted apart; once the bug is gone the case fails
until the mark is removed.
"""
import argparse
import concurrent.futures
import importlib.util
import os
import subprocess
import sys
import time
import traceback

SRC = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODULE_TIMEOUT = 900


def run_unit(build, pattern, name="unit-tests", prefix="unit/"):
    exe = os.path.join(build, name)
    args = [exe] + ([pattern] if pattern else [])
    env = dict(os.environ, GPULABEL_SRCDIR=SRC, GPULABEL_BUILD=build)
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=MODULE_TIMEOUT, env=env)
    except subprocess.TimeoutExpired:
        return [("FAIL", "unit-tests", "timed out")]
    out = []
    for line in p.stdout.splitlines():
        if line.startswith("ok "):
            out.append(("ok", prefix + line[3:], ""))
        elif line.startswith("FAIL "):
            case, _, why = line[5:].partition(": ")
            out.append(("FAIL", prefix + case, why))
    if p.returncode not in (0, 1) or (p.returncode == 1 and not any(r[0] == "FAIL" for r in out)):
        out.append(("FAIL", name, "exit %d: %s" % (p.returncode, p.stderr.strip()[-2000:])))
    return out


def run_fuzz_replays(build, pattern):
    out = []
    for name in sorted(os.listdir(build)):
        if not name.startswith("fuzz-replay-"):
            continue
        target = name[len("fuzz-replay-"):]
        case = "fuzz/%s corpus replay" % target
        if pattern and pattern not in case:
            continue
        corpus = os.path.join(SRC, "tests", "fuzz", "corpus", target)
        if not os.path.isdir(corpus) or not os.listdir(corpus):
            out.append(("FAIL", case, "no corpus in %s" % corpus))
            continue
        try:
            p = subprocess.run([os.path.join(build, name), corpus], capture_output=True,
                               text=True, timeout=MODULE_TIMEOUT)
        except subprocess.TimeoutExpired:
            out.append(("FAIL", case, "timed out"))
            continue
        if p.returncode:
            out.append(("FAIL", case, "exit %d: %s" % (p.returncode, p.stderr.strip()[-2000:])))
        else:
            out.append(("ok", case, ""))
    return out


def module_cases(mod):
    cases = []
    if hasattr(mod, "cases"):
        cases.extend(mod.cases())
    for name in sorted(dir(mod)):
        if name.startswith("test_") and callable(getattr(mod, name)):
            cases.append((name[5:], getattr(mod, name)))
    return cases


def run_module_inline(path, pattern):
    """Child mode: import one module, run its cases, print ok/FAIL lines."""
    sys.path.insert(0, os.path.dirname(path))
    modname = os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(modname, path)
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
        cases = module_cases(mod)
    except Exception:
        print("FAIL %s: cannot load: %s" % (modname, traceback.format_exc().replace("\n", " | ")))
        return
    short = modname[5:] if modname.startswith("test_") else modname
    if getattr(mod, "SKIP", None) and (not pattern or pattern in short):
        print("SKIP %s: %s" % (short, mod.SKIP), flush=True)
        return
    for name, fn in cases:
        full = "%s/%s" % (short, name)
        if pattern and pattern not in full:
            continue
        try:
            fn()
            print("ok %s" % full, flush=True)
        except Exception as e:  # a failed assertion or an unexpected error
            if type(e).__name__ == "KnownBug":
                print("KNOWN-BUG %s: %s" % (full, str(e).replace("\n", " | ")), flush=True)
                continue
            why = "%s: %s" % (type(e).__name__, e)
            tb = traceback.extract_tb(e.__traceback__)
            if tb:
                why += " (%s:%d)" % (os.path.basename(tb[-1].filename), tb[-1].lineno)
            print("FAIL %s: %s" % (full, why.replace("\n", " | ")), flush=True)


def module_python(path):
    """The interpreter a module asks for (`# run.py: python PATH`), else this one."""
    with open(path) as f:
        for _ in range(5):
            line = f.readline()
            if line.startswith("# run.py: python "):
                want = line.split(None, 3)[3].strip()
                if os.access(want, os.X_OK):
                    return want
    return sys.executable


def run_module(build, k8s, path, pattern):
    env = dict(os.environ, GPULABEL_SRCDIR=SRC, GPULABEL_BUILD=build, GPULABEL_K8S=k8s)
    args = [module_python(path), os.path.abspath(__file__), "--module", path]
    if pattern:
        args += ["-k", pattern]
    name = os.path.basename(path)
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=MODULE_TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        return [("FAIL", name, "module timed out after %ds" % MODULE_TIMEOUT)]
    out = []
    for line in p.stdout.splitlines():
        if line.startswith("ok "):
            out.append(("ok", line[3:], ""))
        elif line.startswith("FAIL "):
            n, _, why = line[5:].partition(": ")
            out.append(("FAIL", n, why))
        elif line.startswith("KNOWN-BUG "):
            n, _, why = line[10:].partition(": ")
            out.append(("KNOWN-BUG", n, why))
        elif line.startswith("SKIP "):
            n, _, why = line[5:].partition(": ")
            out.append(("SKIP", n, why))
    if p.returncode:
        out.append(("FAIL", name, "exit %d: %s" % (p.returncode, p.stderr.strip()[-2000:])))
    return out


K8S_TOOLS = ("k8s-cluster", "kube-apiserver", "kube-controller-manager", "kube-scheduler", "kubectl")


def k8s_missing(k8s):
    """Why the real-Kubernetes suites cannot run (None when build/k8s/ is complete)."""
    if os.path.exists(os.path.join(k8s, ".built")) and all(
            os.access(os.path.join(k8s, t), os.X_OK) for t in K8S_TOOLS):
        return None
    try:
        p = subprocess.run([os.path.join(SRC, "tests", "k8s", "go-check")], capture_output=True,
                           text=True, timeout=60)
        why = p.stdout.strip() if p.returncode else ""
    except OSError as e:
        why = str(e)
    if why:
        return "%s, so %s/ cannot be built" % (why, os.path.relpath(k8s, SRC))
    return "%s/ is not built; `make k8s` builds it" % os.path.relpath(k8s, SRC)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--build", default="build")
    ap.add_argument("--k8s", default=os.path.join(SRC, "build", "k8s"),
                    help="the real Kubernetes components (make k8s)")
    ap.add_argument("-k", dest="pattern", default=None, help="run only cases whose name contains this")
    ap.add_argument("-j", dest="jobs", type=int, default=2)
    ap.add_argument("--module", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.module:
        run_module_inline(a.module, a.pattern)
        return 0
    build = os.path.abspath(a.build)
    start = time.time()
    results = []
    results += run_unit(build, a.pattern)
    results += run_unit(build, a.pattern, "torture", "")
    results += run_fuzz_replays(build, a.pattern)
    idir = os.path.join(SRC, "tests", "integration")
    mods = sorted(os.path.join(idir, f) for f in os.listdir(idir)
                  if f.startswith("test_") and f.endswith(".py"))
    k8s = os.path.abspath(a.k8s)
    k8s_mods = [m for m in mods if os.path.basename(m).startswith("test_k8s_")]
    skipped = k8s_missing(k8s) if k8s_mods else None
    if skipped:
        mods = [m for m in mods if m not in k8s_mods]
    # the real-Kubernetes modules take longest: start them first
    mods.sort(key=lambda m: not os.path.basename(m).startswith("test_k8s_"))
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as ex:
        for res in ex.map(lambda m: run_module(build, k8s, m, a.pattern), mods):
            results += res
    passed = failed = known = 0
    for status, name, why in results:
        if status == "SKIP":
            print("skipped: %s: %s" % (name, why))
        elif status == "ok":
            passed += 1
            print("ok %s" % name)
        elif status == "KNOWN-BUG":
            known += 1
            print("KNOWN-BUG %s: %s" % (name, why))
        else:
            failed += 1
            print("FAIL %s: %s" % (name, why))
    if skipped:
        print("skipped: the real-Kubernetes suites (%d modules, tests/integration/test_k8s_*.py): %s"
              % (len(k8s_mods), skipped))
    if known:
        print("# %d known bug(s) in src/ shown by tests marked util.known_bug (not counted below)"
              % known)
    print("# %.1fs" % (time.time() - start))
    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())

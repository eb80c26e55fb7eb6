"""Scheduling scenarios as fixture files: one case per directory of tests/scenarios/.

Each directory holds input manifests, optional `args`, and `expected.json` (the exact
`gpusched simulate -o json` document, with `*` allowed in controller-made pod names) or
`expected.txt` (the exact standard output) or `expected.err` (input the API server would
refuse: exit 1 and this exact standard error, the case's directory left out of file names).
`interchangeable` lists groups of identical nodes
whose names may be permuted, since kube-scheduler breaks ties at random. See
tests/scenarios/README.md.
"""
import fnmatch
import itertools
import json
import os
import shlex

import util

ROOT = os.path.join(util.SRC, "tests", "scenarios")
INPUT_EXT = (".yaml", ".yml", ".json")


def _inputs(d):
    return [os.path.join(d, f) for f in sorted(os.listdir(d))
            if f.endswith(INPUT_EXT) and f != "expected.json"]


def _read(path):
    with open(path, encoding="utf-8") as f:
        return f.read()


def _groups(d):
    p = os.path.join(d, "interchangeable")
    if not os.path.exists(p):
        return []
    return [line.split() for line in _read(p).splitlines() if line.strip()]


def _mappings(groups):
    """Every node renaming that permutes names within each group."""
    per_group = []
    for g in groups:
        per_group.append([dict(zip(g, p)) for p in itertools.permutations(g)])
    for combo in itertools.product(*per_group) if per_group else [()]:
        m = {}
        for part in combo:
            m.update(part)
        yield m


def _matches(got, want, rename, key=None):
    if isinstance(want, dict):
        return (isinstance(got, dict) and list(got) == list(want)
                and all(_matches(got[k], want[k], rename, k) for k in want))
    if isinstance(want, list):
        return (isinstance(got, list) and len(got) == len(want)
                and all(_matches(g, w, rename, key) for g, w in zip(got, want)))
    if isinstance(want, str) and isinstance(got, str):
        if key == "node":
            want = rename.get(want, want)
        if key in ("pod", "by") and ("*" in want or "?" in want):
            return fnmatch.fnmatchcase(got, want)
        return got == want
    return got == want


def _run(d):
    argv = [util.binary("gpusched"), "simulate"]
    for f in _inputs(d):
        argv += ["-f", f]
    args_path = os.path.join(d, "args")
    if os.path.exists(args_path):
        args = shlex.split(_read(args_path))
        # --config names a file of the case's directory
        argv += [os.path.join(d, a) if i and args[i - 1] == "--config" else a
                 for i, a in enumerate(args)]
    want_json = os.path.exists(os.path.join(d, "expected.json"))
    if want_json:
        argv += ["-o", "json"]
    p = util.run(argv)
    err_path = os.path.join(d, "expected.err")
    if os.path.exists(err_path):
        if p.returncode != 1 or p.stdout:
            raise AssertionError("want exit 1 and no output, got exit %d: %r" % (p.returncode, p.stdout))
        util.check_eq(p.stderr.replace(d + os.sep, ""), _read(err_path), "stderr")
        return
    if p.returncode != 0:
        raise AssertionError("exit %d: %s" % (p.returncode, p.stderr.strip()))
    if not want_json:
        util.check_eq(p.stdout, _read(os.path.join(d, "expected.txt")), "stdout")
        return
    # the contract: one compact JSON document on one line
    lines = p.stdout.splitlines()
    if len(lines) != 1:
        raise AssertionError("want one line of JSON, got %d lines: %r" % (len(lines), p.stdout))
    got = json.loads(lines[0])
    if json.dumps(got, separators=(",", ":"), ensure_ascii=False) != lines[0]:
        raise AssertionError("JSON is not compact: %r" % lines[0])
    want = json.loads(_read(os.path.join(d, "expected.json")))
    for rename in _mappings(_groups(d)):
        if _matches(got, want, rename):
            return
    raise AssertionError("got %s\nwant %s" % (json.dumps(got, indent=1), json.dumps(want, indent=1)))


def cases():
    for name in sorted(os.listdir(ROOT)):
        d = os.path.join(ROOT, name)
        if os.path.isdir(d):
            yield name, (lambda d=d: _run(d))


def test_every_scenario_has_an_expectation_and_a_description():
    for name in sorted(os.listdir(ROOT)):
        d = os.path.join(ROOT, name)
        if not os.path.isdir(d):
            continue
        has = [f for f in ("expected.json", "expected.txt", "expected.err")
               if os.path.exists(os.path.join(d, f))]
        if len(has) != 1:
            raise AssertionError("%s: want exactly one of expected.json/.txt/.err, got %s" % (name, has))
        if not os.path.exists(os.path.join(d, "description")):
            raise AssertionError("%s: no description" % name)
        if not _inputs(d):
            raise AssertionError("%s: no input manifests" % name)

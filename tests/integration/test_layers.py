"""The layer rule of docs/design.md, checked (scripts/check-layers): no #include crosses the
layer table, no headers include each other round a loop, no .c files call each other round a
loop, no folders form one; and the checker fails where it should, on a copy of the tree with
each rule broken once. The tree has no circle: KNOWN lists any that a change must carry for a
while, each as a known bug that fails once it is gone."""
import os
import shutil
import subprocess
import sys
import tempfile

import util

KNOWN = {}


def check_layers(root, *args):
    return subprocess.run([sys.executable, os.path.join(root, "scripts", "check-layers")] +
                          list(args), capture_output=True, text=True, timeout=120)


def known_args():
    out = []
    for k in KNOWN:
        out += ["--known", k]
    return out


def test_the_tree_keeps_the_layer_table():
    p = check_layers(util.SRC, *known_args())
    if p.returncode != 0:
        raise AssertionError("scripts/check-layers:\n" + p.stdout + p.stderr)


def known_circle(pair, what):
    def case():
        p = check_layers(util.SRC)
        a, b = pair.split(":")
        with util.known_bug(what):
            if any(a in line and b in line for line in p.stdout.splitlines()
                   if line.startswith("files that call each other")):
                raise AssertionError("still there: " + [line for line in p.stdout.splitlines()
                                                        if a in line and b in line][0][:300])
    return case


def broken_copy(edit):
    """runs check-layers on a copy of src/, docs/design.md and the script with edit(root) made"""
    root = tempfile.mkdtemp(prefix="gpulabel-layers-")
    try:
        shutil.copytree(os.path.join(util.SRC, "src"), os.path.join(root, "src"))
        os.makedirs(os.path.join(root, "docs"))
        shutil.copy(os.path.join(util.SRC, "docs", "design.md"), os.path.join(root, "docs"))
        os.makedirs(os.path.join(root, "scripts"))
        shutil.copy(os.path.join(util.SRC, "scripts", "check-layers"),
                    os.path.join(root, "scripts"))
        edit(root)
        return check_layers(root, *known_args())
    finally:
        shutil.rmtree(root, ignore_errors=True)


def append(root, path, text):
    with open(os.path.join(root, "src", path), "a", encoding="utf-8") as f:
        f.write(text)


def test_an_include_up_the_layers_fails():
    p = broken_copy(lambda r: append(r, "base/buf.c", '#include "sched/sched.h"\n'))
    util.check_eq(p.returncode, 1, "exit status: " + p.stdout)
    if 'src/base/buf.c:' not in p.stdout or "base/ may include only nothing of ours" not in p.stdout:
        raise AssertionError("the report does not name the include: " + p.stdout)


def test_headers_in_a_loop_fail():
    def edit(r):
        append(r, "base/err.h", '#include "base/buf.h"\n')
        append(r, "base/buf.h", '#include "base/err.h"\n')
    p = broken_copy(edit)
    util.check_eq(p.returncode, 1, "exit status: " + p.stdout)
    if "headers that include each other: base/buf.h, base/err.h" not in p.stdout:
        raise AssertionError("the report does not name the loop: " + p.stdout)


def test_files_calling_each_other_fail():
    def edit(r):
        append(r, "base/keymap.c", "void keymap_calls_clock(void);\n"
               "void keymap_calls_clock(void) { mono_sleep_ms(0); }\n")
        append(r, "base/clock.c", "void clock_calls_keymap(void);\n"
               "void clock_calls_keymap(void) { keymap_calls_clock(); }\n")
    p = broken_copy(edit)
    util.check_eq(p.returncode, 1, "exit status: " + p.stdout)
    if "files that call each other: base/clock.c, base/keymap.c" not in p.stdout:
        raise AssertionError("the report does not name the circle: " + p.stdout)


def test_a_table_with_a_loop_fails():
    def edit(r):
        path = os.path.join(r, "docs", "design.md")
        text = open(path, encoding="utf-8").read().replace(
            "| `src/base/` | nothing of ours |", "| `src/base/` | kube |")
        open(path, "w", encoding="utf-8").write(text)
    p = broken_copy(edit)
    util.check_eq(p.returncode, 1, "exit status: " + p.stdout)
    if "layer table has a loop" not in p.stdout:
        raise AssertionError("the report does not name the table's loop: " + p.stdout)


def cases():
    for pair, what in KNOWN.items():
        yield "known circle %s" % pair.replace(":", " and "), known_circle(pair, what)

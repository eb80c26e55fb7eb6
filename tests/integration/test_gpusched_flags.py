"""Every flag a gpusched command's --help lists is one its parser takes, and every output
format and kubectl convention the help promises works: each command's flags
are one table, its help and its parser both (src/base/flag.h). The cases are made from the
help texts themselves, so a flag added to a table is tested without a line here."""
import os
import re

import util

SEED = os.path.join(util.SRC, "examples", "seed")
# a value each kind of flag argument takes at parse time
VALUES = {"FILE": SEED, "FORMAT": "json", "NS": "default", "NAME": "default", "N": "1",
          "VERSION": "1.37", "PATH": "/nonexistent", "SELECTOR": "a=b", "KEY,...": "a",
          "D": "15s", "HOST:PORT": "0", "default|gpu": "default", "text|json": "text",
          "PORT": "0", "IP": "127.0.0.1", "LIST": "/healthz", "QUANTITY": "64Mi",
          "EXPR": "true"}


def gpusched(*args):
    return util.run([util.binary("gpusched")] + list(args))


def commands():
    """The commands the top-level help lists."""
    text = gpusched("--help").stdout
    block = text.split("Commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.strip()]


def flags(cmd):
    """(spelling, value) for each flag of cmd's --help: both the long and the short names."""
    p = gpusched(cmd, "--help")
    if p.returncode != 0:
        raise AssertionError("%s --help: exit %d: %s" % (cmd, p.returncode, p.stderr))
    out = []
    for line in p.stdout.splitlines():
        m = re.match(r"^  (?:-(\w), )?\s*--([\w-]+)(?: (\S+))?", line)
        if not m or m.group(2) == "help":
            continue
        short, long_, arg = m.groups()
        value = None if arg is None else VALUES.get(arg)
        if arg is not None and value is None:
            raise AssertionError("%s: no test value for --%s %s" % (cmd, long_, arg))
        out.append(("--" + long_, value))
        if short:
            out.append(("-" + short, value))
    return out


def parses(cmd, spelling, value):
    def case():
        args = [cmd, spelling] + ([value] if value is not None else []) + ["--help"]
        p = gpusched(*args)
        if p.returncode != 0 or "Usage:" not in p.stdout:
            raise AssertionError("%s: --help lists %s, the parser refuses it: exit %d: %s"
                                 % (" ".join(args), spelling, p.returncode, p.stderr.strip()))
    return case


def kubectl_commands():
    """The commands the top-level help says take --no-headers, -o yaml and -o name."""
    text = gpusched("--help").stdout.replace("\n", " ")
    m = re.search(r"commands that print tables or JSON \(([^)]*)\)", text)
    if not m:
        return commands()  # ("Every command also takes ...", as the help once said)
    return [c.strip() for c in m.group(1).split(",")]


def formats(cmd):
    """The -o values cmd's --help lists."""
    text = gpusched(cmd, "--help").stdout
    m = re.search(r"-o, --output FORMAT\s+(.*?)\n(?:  -|      --)", text, re.S)
    if not m:
        return []
    words = re.sub(r"\([^)]*\)", "", " ".join(m.group(1).split()))
    return [w for w in re.split(r"[ ,]+|\bor\b", words) if w in
            ("table", "wide", "json", "yaml", "name")]


def prints(cmd, args):
    def case():
        extra = ["default/not-in-gpu-node"] if cmd == "explain" else []
        p = gpusched(cmd, "-f", SEED, *(args + extra))
        if p.returncode != 0 or not p.stdout:
            raise AssertionError("%s %s: exit %d, %d bytes out: %s" % (
                cmd, " ".join(args), p.returncode, len(p.stdout), p.stderr.strip()))
    return case


def cases():
    for cmd in commands():
        for spelling, value in flags(cmd):
            yield "%s %s parses" % (cmd, spelling), parses(cmd, spelling, value)
    for cmd in kubectl_commands():
        yield "%s lists --no-headers" % cmd, lambda c=cmd: check_listed(c, "--no-headers")
        yield "%s --no-headers" % cmd, prints(cmd, ["--no-headers"])
        for fmt in ["yaml", "name"]:
            yield "%s lists -o %s" % (cmd, fmt), lambda c=cmd, f=fmt: check_format(c, f)
        for fmt in formats(cmd):
            yield "%s -o %s" % (cmd, fmt), prints(cmd, ["-o", fmt])


def check_listed(cmd, spelling):
    if spelling not in [s for s, _ in flags(cmd)]:
        raise AssertionError("%s --help does not list %s" % (cmd, spelling))


def check_format(cmd, fmt):
    if fmt not in formats(cmd):
        raise AssertionError("%s --help's -o does not list %s: %r" % (cmd, fmt, formats(cmd)))


def test_nodes_takes_namespace_as_kubectl_does():
    """kubectl get nodes -n NS is accepted (nodes have no namespace); so is gpusched nodes -n."""
    a = gpusched("nodes", "-f", SEED)
    b = gpusched("nodes", "-n", "default", "-f", SEED)
    util.check_eq(b.returncode, 0, "nodes -n default: %s" % b.stderr)
    util.check_eq(b.stdout, a.stdout, "nodes -n changes nothing")

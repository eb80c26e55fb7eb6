"""make install: what it puts where (binaries, the kubectl plugin, man pages, completions),
and that each program's man page documents every flag its --help lists and renders without
a warning."""
import os
import re
import shutil
import subprocess
import tempfile

import util


def test_install_puts_binaries_man_pages_and_completions():
    dest = tempfile.mkdtemp(prefix="gpulabel-install-")
    try:
        # the binaries the suite runs on are installed as they are (-o: never rebuilt here)
        p = subprocess.run(["make", "-s", "-C", util.SRC, "install", "BUILD=" + util.BUILD,
                            "-o", util.binary("gpulabel"), "-o", util.binary("gpusched"),
                            "DESTDIR=" + dest, "PREFIX=/usr"], capture_output=True, text=True, timeout=600)
        util.check_eq(p.returncode, 0, "make install: %s" % p.stderr[-2000:])
        for f in ("bin/gpulabel", "bin/gpusched", "bin/kubectl-gpusched", "bin/kubectl_complete-gpusched",
                  "share/man/man1/gpulabel.1", "share/man/man1/gpusched.1",
                  "share/man/man1/kubectl-gpusched.1",
                  "share/bash-completion/completions/gpusched", "share/zsh/site-functions/_gpusched"):
            if not os.path.exists(os.path.join(dest, "usr", f)):
                raise AssertionError("make install did not install %s" % f)
    finally:
        shutil.rmtree(dest, ignore_errors=True)


def long_flags(help_text):
    return sorted(set(re.findall(r"(?m)^\s+(?:-\w, )?(--[a-z][a-z0-9-]*)", help_text)))


def test_gpulabel_man_page_has_every_flag_of_its_help():
    p = util.run([util.binary("gpulabel"), "--help"])
    util.check_eq(p.returncode, 0, "gpulabel --help")
    flags = long_flags(p.stdout)
    if len(flags) < 10:
        raise AssertionError("too few flags read from --help: %r" % flags)
    with open(os.path.join(util.SRC, "docs", "man", "gpulabel.1")) as f:
        page = f.read().replace("\\-", "-")
    missing = [f for f in flags if not re.search(r"(?<![\w-])%s(?![\w-])" % re.escape(f), page)]
    util.check_eq(missing, [], "flags of gpulabel --help missing from docs/man/gpulabel.1")


def test_man_pages_render_without_warnings():
    groff = shutil.which("groff")
    if not groff:
        raise AssertionError("groff is missing (Debian's groff-base, part of man-db)")
    for page in ("gpulabel.1", "gpusched.1"):
        p = util.run([groff, "-man", "-Tutf8", "-ww", "-z", os.path.join(util.SRC, "docs", "man", page)])
        util.check_eq((p.returncode, p.stderr), (0, ""), "groff -ww on " + page)

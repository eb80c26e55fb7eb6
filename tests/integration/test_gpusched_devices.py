"""`gpusched devices` on manifest files (tests/fixtures/dra/devices.yaml): the table and its
wide columns, -o json's exact shape, -o yaml, --selector (repeatable, all must hold) and --class
as a request's selectors, a device whose evaluation fails listed with the scheduler's error, an
outdated pool generation left out, a DeviceTaintRule's taint, and the bad input: a selector
that does not compile (the expression, a caret under the column, cel-go's message, exit 2), too
long, too complex, empty, too many, an unknown class (exit 1)."""
import json
import os

import util

F = os.path.join(util.SRC, "tests", "fixtures", "dra", "devices.yaml")
SEED = os.path.join(util.SRC, "examples", "seed")
NV = "gpu.nvidia.com"


def gpusched(*args, input=None):
    return util.run([util.binary("gpusched")] + list(args), input=input)


def ok(*args):
    p = gpusched(*args)
    if p.returncode != 0:
        raise AssertionError("%s: exit %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return p


def ids(doc):
    return ["%s/%s/%s" % (d["driver"], d["pool"], d["device"]) for d in doc["devices"]]


def test_table_lists_every_current_device():
    p = ok("devices", "-f", F)
    rows = [l.split() for l in p.stdout.splitlines()]
    util.check_eq(rows[0], ["NODE", "DRIVER", "POOL", "DEVICE", "PRODUCT", "MEMORY"], "header")
    # by node, driver, pool, then slice order; gpu-2's generation-1 slice (a K80) is outdated
    util.check_eq(rows[1:], [
        ["<all", "nodes>", "net.example.com", "fabric", "nic-0", "<none>", "<none>"],
        ["gpu-1", NV, "gpu-1", "gpu-0", "Tesla-M40", "12Gi"],
        ["gpu-1", NV, "gpu-1", "gpu-1", "Tesla-T4", "16Gi"],
        ["gpu-2", NV, "gpu-2", "gpu-0", "A100-SXM4-80GB", "80Gi"],
        ["gpu-2", NV, "gpu-2", "gpu-1", "A100-SXM4-80GB", "80Gi"]], "rows")
    util.check_eq("K80" in p.stdout, False, "the outdated slice")


def test_wide_has_attributes_capacity_and_taints():
    p = ok("devices", "-f", F, "-o", "wide", "--no-headers")
    t4 = [l for l in p.stdout.splitlines() if "Tesla-T4" in l][0].split()
    util.check_eq(t4[6:], ["gpu-1-gpu", "productName=Tesla-T4,architecture=Turing,index=1",
                           "memory=16Gi", "example.com/broken=fan:NoSchedule"], "the T4's row")


def test_json_shape():
    doc = json.loads(ok("devices", "-f", F, "-o", "json").stdout)
    util.check_eq(list(doc), ["devices", "errors"], "keys")
    util.check_eq(doc["devices"][1], {"node": "gpu-1", "driver": NV, "pool": "gpu-1",
                                      "device": "gpu-0"}, "a device")
    util.check_eq(doc["devices"][0]["node"], "", "a device on every node names none")
    util.check_eq(doc["errors"], [], "errors")
    y = ok("devices", "-f", F, "-o", "yaml").stdout
    if not y.startswith("devices:\n- node: ''\n") and not y.startswith('devices:\n- node: ""\n'):
        raise AssertionError(y[:200])


def test_selectors_all_must_hold_and_errors_are_listed():
    a100 = 'device.attributes["%s"].productName.startsWith("A100")' % NV
    doc = json.loads(ok("devices", "-f", F, "--selector", a100, "-o", "json").stdout)
    util.check_eq(ids(doc), [NV + "/gpu-2/gpu-0", NV + "/gpu-2/gpu-1"], "A100s")
    util.check_eq(doc["errors"], [{
        "device": "net.example.com/fabric/nic-0",
        "message": "selector #0 on device net.example.com/fabric/nic-0: CEL runtime error: no "
                   "such key: productName. consider using CEL optional chaining (.? followed by "
                   "orValue()) or guarding the check with has() for optional fields"}], "errors")
    # a second selector must hold too; the first that fails decides (the NIC never reaches it)
    doc = json.loads(ok("devices", "-f", F, "--selector", 'device.driver == "%s"' % NV,
                        "--selector", 'device.attributes["%s"].index == 1' % NV,
                        "-o", "json").stdout)
    util.check_eq((ids(doc), doc["errors"]), ([NV + "/gpu-1/gpu-1", NV + "/gpu-2/gpu-1"], []),
                  "two selectors")
    # a comma inside one expression is not two selectors
    doc = json.loads(ok("devices", "-f", F, "--selector",
                        'device.driver in ["%s", "x.example.com"]' % NV, "-o", "json").stdout)
    util.check_eq(len(doc["devices"]), 4, "one selector with commas")
    # the table shows the error in its own column
    p = ok("devices", "-f", F, "--selector", a100)
    util.check_eq(p.stdout.splitlines()[0].split()[-1], "ERROR", "ERROR column")


def test_class_selectors_come_first():
    doc = json.loads(ok("devices", "-f", F, "--class", "big", "-o", "json").stdout)
    util.check_eq(ids(doc), [NV + "/gpu-1/gpu-1", NV + "/gpu-2/gpu-0", NV + "/gpu-2/gpu-1"],
                  "16Gi or more")
    util.check_eq([e["message"].split(":")[0] for e in doc["errors"]], ["class big"],
                  "the class's runtime error names it")
    doc = json.loads(ok("devices", "-f", F, "--class", NV, "--selector",
                        'device.attributes["%s"].productName == "Tesla-M40"' % NV,
                        "-o", "json").stdout)
    util.check_eq((ids(doc), doc["errors"]), ([NV + "/gpu-1/gpu-0"], []), "class then selector")


def test_compile_error_shows_the_caret_and_exits_2():
    p = gpusched("devices", "-f", F, "--selector", "device.driver == 1 && device.nope")
    util.check_eq(p.returncode, 2, "exit")
    util.check_eq(p.stdout, "", "no output")
    lines = p.stderr.splitlines()
    util.check_eq(lines[0][:60], "gpusched: --selector #0: compilation failed: ERROR: <input>:1"[:60],
                  "first line")
    # cel-go's display: the source line, then a caret under the column it names
    src = [l for l in lines if l.startswith(" | device.driver")]
    carets = [l for l in lines if l.startswith(" | ") and l.rstrip().endswith("^")]
    if not src or not carets:
        raise AssertionError(p.stderr)
    col = int(lines[0].split("<input>:1:")[1].split(":")[0])
    util.check_eq(carets[0].index("^") - 3 + 1, col, "the caret under the (1-based) column")


def test_bad_selectors_and_classes():
    for args, code, text in [
        (["--selector", ""], 2, "gpusched: --selector #0: Required value"),
        (["--selector", "true", "--selector", "1 + 1"], 2,
         "gpusched: --selector #1: must evaluate to bool or the unknown type, not int"),
        (["--selector", "true || " * 1300 + "true"], 2, "gpusched: --selector #0: Too long: may not be more than 10240 bytes"),
        (["--selector", 'device.attributes["a"].?b.orValue("").matches("^x+$")'], 2,
         "gpusched: --selector #0: Forbidden: too complex, exceeds cost limit"),
        (["--class", "nope"], 1, 'gpusched: deviceclasses.resource.k8s.io "nope" not found'),
        (["-o", "name"], 2, "gpusched: unable to match a printer"),
        (["extra"], 2, 'gpusched: unexpected argument "extra"'),
    ]:
        p = gpusched("devices", "-f", F, *args)
        util.check_eq(p.returncode, code, "%r: exit (%s)" % (args[:2], p.stderr))
        if not p.stderr.startswith(text):
            raise AssertionError("%r: %r" % (args[:2], p.stderr))
    many = []
    for _ in range(33):
        many += ["--selector", "true"]
    p = gpusched("devices", "-f", F, *many)
    util.check_eq(p.returncode, 2, "33 selectors")
    if "at most 32 selectors" not in p.stderr:
        raise AssertionError(p.stderr)


def test_no_slices():
    p = ok("devices", "-f", SEED)
    util.check_eq((p.stdout, p.stderr), ("", "No resources found\n"), "table")
    util.check_eq(json.loads(ok("devices", "-f", SEED, "-o", "json").stdout),
                  {"devices": [], "errors": []}, "json")
    p = gpusched("devices", "-f", SEED, "--class", "x")
    util.check_eq(p.returncode, 1, "no class")


def test_help():
    p = ok("devices", "--help")
    for want in ("--selector EXPR", "--class NAME", "--kubeconfig PATH", "-o, --output FORMAT"):
        if want not in p.stdout:
            raise AssertionError("%s not in the help" % want)
    if "devices " not in ok("--help").stdout:
        raise AssertionError("devices not in gpusched --help")

"""The ONNX conformance cases vk-conformance passes, run through vkc.InferenceSession.run and
compared with the test data's expected outputs with vk-conformance's tolerances (floats:
|actual - expected| <= atol + rtol * |expected| per element, NaN only where NaN is expected;
integers and bools exactly; dtypes and shapes equal).

The cases are the rows of docs/conformance.md that say "pass" (vk-conformance's results on
lavapipe): node and pytorch-converted tests from Debian's libonnx-testdata and vkc's own ort_cases.
CTest (python.conformance) runs them all (about 20 s on lavapipe); --every N runs a deterministic
subset, every Nth case in name order. With --vk-run PATH, every --same-every'th case (first data
set) also runs through the vk-run CLI on the same inputs (.npy files), and the two results must
be identical, bit for bit (NaN where NaN): the module and the CLI share one library.

Usage: run_conformance.py [--every N] [--offset K] [--filter REGEX] [--list]
                          [--vk-run PATH [--same-every N]]"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np
import onnx
from onnx import numpy_helper

import vkc

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
TESTDATA = "/usr/share/libonnx-testdata/data"
RTOL, ATOL = 1e-4, 1e-5


def passing_cases():
    """suite/test names docs/conformance.md's table marks pass."""
    cases = []
    with open(os.path.join(ROOT, "docs", "conformance.md")) as f:
        for line in f:
            m = re.match(r"^\| (\S+/\S+) \| pass \|", line)
            if m:
                cases.append(m.group(1))
    return sorted(cases)


def case_dir(name):
    suite, test = name.split("/", 1)
    if suite == "ort_cases":
        return os.path.join(ROOT, "tests", "conformance", "ort_cases", test)
    return os.path.join(TESTDATA, suite, test)


def read_pb(path):
    """(name, array) of a TensorProto file; name may be ""."""
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t.name, numpy_helper.to_array(t)


def mismatch(actual, expected):
    """"" when actual matches expected, else why not."""
    if actual.dtype != expected.dtype:
        return "dtype %s, expected %s" % (actual.dtype, expected.dtype)
    if actual.shape != expected.shape:
        return "shape %s, expected %s" % (actual.shape, expected.shape)
    if expected.dtype.kind == "f":
        a, e = actual.astype(np.float64), expected.astype(np.float64)
        nan_a, nan_e = np.isnan(a), np.isnan(e)
        if (nan_a != nan_e).any():
            return "NaN at %d places where not expected (or missing)" % int((nan_a != nan_e).sum())
        ok = nan_e | (a == e) | (np.abs(a - e) <= ATOL + RTOL * np.abs(e))
        if not ok.all():
            i = int(np.argmin(ok.reshape(-1)))
            return "%d elements differ; first at flat index %d: %r, expected %r" % (
                int((~ok).sum()), i, a.reshape(-1)[i], e.reshape(-1)[i])
        return ""
    if not np.array_equal(actual, expected):
        return "%d elements differ" % int((actual != expected).sum())
    return ""


def same_as_vk_run(vk_run, model, feed, outputs, got):
    """"" when vk-run gives exactly `got` for `feed`, else why not."""
    with tempfile.TemporaryDirectory() as tmp:
        cmd = [vk_run, model, "--output-dir", os.path.join(tmp, "out")]
        for i, (name, array) in enumerate(feed.items()):
            path = os.path.join(tmp, "input%d.npy" % i)
            np.save(path, array)
            cmd += ["--input", "%s=%s" % (name, path)]
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            return "vk-run failed: " + (r.stderr.strip().splitlines() or ["?"])[-1]
        for oname, mine in zip(outputs, got):
            theirs = np.load(os.path.join(tmp, "out", oname + ".npy"))
            same = theirs.dtype == mine.dtype and theirs.shape == mine.shape and np.array_equal(
                theirs, mine, equal_nan=mine.dtype.kind == "f")
            if not same:
                return "output '%s' differs from vk-run's" % oname
    return ""


def run_case(name, device, vk_run=None):
    """"" when every data set of the case passes, else why not."""
    d = case_dir(name)
    sess = vkc.InferenceSession(os.path.join(d, "model.onnx"), device=device)
    inputs = [i.name for i in sess.get_inputs()]
    outputs = [o.name for o in sess.get_outputs()]
    sets = sorted(glob.glob(os.path.join(d, "test_data_set_*")))
    if not sets:
        return "no test data sets"
    for data in sets:
        given = sorted(glob.glob(os.path.join(data, "input_*.pb")), key=lambda p: int(re.findall(r"\d+", p)[-1]))
        wanted = sorted(glob.glob(os.path.join(data, "output_*.pb")), key=lambda p: int(re.findall(r"\d+", p)[-1]))
        feed = {}
        for position, path in enumerate(given):  # by the tensor's name, else by position
            name, array = read_pb(path)
            feed[name if name in inputs else inputs[position]] = array
        got = sess.run(None, feed)
        if len(got) != len(wanted) or len(got) != len(outputs):
            return "%d outputs, expected %d" % (len(got), len(wanted))
        for oname, actual, path in zip(outputs, got, wanted):
            why = mismatch(actual, read_pb(path)[1])
            if why:
                return "%s: output '%s': %s" % (os.path.basename(data), oname, why)
        if vk_run and data == sets[0]:
            why = same_as_vk_run(vk_run, os.path.join(d, "model.onnx"), feed, outputs, got)
            if why:
                return "%s: %s" % (os.path.basename(data), why)
    return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--every", type=int, default=1, help="run every Nth case (name order)")
    ap.add_argument("--offset", type=int, default=0, help="start at the Kth case")
    ap.add_argument("--filter", default="", help="only cases whose name matches this regex")
    ap.add_argument("--list", action="store_true", help="print the cases and stop")
    ap.add_argument("--vk-run", default="", help="also compare every --same-every'th case with this vk-run")
    ap.add_argument("--same-every", type=int, default=20)
    args = ap.parse_args()
    cases = [c for c in passing_cases() if re.search(args.filter, c)][args.offset::max(1, args.every)]
    if not cases:
        print("no cases (docs/conformance.md has no passing rows matching)", file=sys.stderr)
        return 1
    if args.list:
        print("\n".join(cases))
        return 0
    missing = [c for c in cases if not os.path.isdir(case_dir(c))]
    if missing:
        print("test data missing for %d cases (install libonnx-testdata), e.g. %s" % (len(missing), missing[0]),
              file=sys.stderr)
        return 1
    device = vkc.Device()  # one device for all cases, used from this thread only
    failures = []
    compared = 0
    t0 = time.perf_counter()
    for i, name in enumerate(cases):
        vk_run = args.vk_run if args.vk_run and i % max(1, args.same_every) == 0 else None
        compared += vk_run is not None
        try:
            why = run_case(name, device, vk_run)
        except (ValueError, RuntimeError) as e:
            why = "%s: %s" % (type(e).__name__, e)
        print("%s\t%s%s" % ("fail" if why else "pass", name, "\t" + why if why else ""), flush=True)
        if why:
            failures.append(name)
    print("%d cases through vkc.InferenceSession on %s: %d pass, %d fail (%.1f s); %d also compared with vk-run" % (
        len(cases), device.name, len(cases) - len(failures), len(failures), time.perf_counter() - t0, compared))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())

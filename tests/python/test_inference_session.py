"""vkc's Python module through its ONNX Runtime-shaped API, on the device CTest names (lavapipe,
validation layer on: a validation message fails the run it happens in). Small ONNX models are
built here with onnx.helper and checked against numpy. Run by CTest (label python) with Debian's
/usr/bin/python3 and PYTHONPATH=BUILD/python."""

import json
import os
import sys
import tempfile
import threading
import time
import unittest

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import vkc

F32, I64 = TensorProto.FLOAT, TensorProto.INT64


def model_bytes(nodes, inputs, outputs, initializers=(), opset=17):
    graph = helper.make_graph(nodes, "test", inputs, outputs, list(initializers))
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    onnx.checker.check_model(model)
    return model.SerializeToString()


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def add_relu():
    """y = relu(a + b), a and b f32[2, 3]."""
    return model_bytes([helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])],
                       [helper.make_tensor_value_info("a", F32, [2, 3]), helper.make_tensor_value_info("b", F32, [2, 3])],
                       [helper.make_tensor_value_info("y", F32, [2, 3])])


def symbolic_matmul(w):
    """y = relu(x @ W), x f32[batch, seq, 4]."""
    return model_bytes([helper.make_node("MatMul", ["x", "W"], ["h"]), helper.make_node("Relu", ["h"], ["y"])],
                       [helper.make_tensor_value_info("x", F32, ["batch", "seq", 4])],
                       [helper.make_tensor_value_info("y", F32, ["batch", "seq", 3])],
                       [numpy_helper.from_array(w, "W")])


def topk(k):
    """values, indices = TopK(x, k) over the last axis, x f32[3, 10]."""
    return model_bytes([helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=-1)],
                       [helper.make_tensor_value_info("x", F32, [3, 10])],
                       [helper.make_tensor_value_info("values", F32, [3, k]),
                        helper.make_tensor_value_info("indices", I64, [3, k])],
                       [numpy_helper.from_array(np.array([k], dtype=np.int64), "k")])


def rand(shape, seed):
    return np.random.default_rng(seed).uniform(-1, 1, shape).astype(np.float32)


class InferenceSessionTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory(prefix="vkc-python-test-")
        cls.device = vkc.Device()  # shared by the single-threaded tests (device creation is slow)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_runs_a_model_from_bytes_and_from_a_file(self):
        a, b = rand((2, 3), 1), rand((2, 3), 2)
        for source in (add_relu(), write(self.tmp.name, "add_relu.onnx", add_relu())):
            sess = vkc.InferenceSession(source, device=self.device)
            self.assertEqual(sess.get_providers(), ["VkcVulkanExecutionProvider"])
            out = sess.run(None, {"a": a, "b": b})
            self.assertEqual(len(out), 1)
            self.assertEqual(out[0].dtype, np.float32)
            np.testing.assert_allclose(out[0], np.maximum(a + b, 0), rtol=1e-6, atol=1e-7)

    def test_inputs_and_outputs_describe_the_model(self):
        sess = vkc.InferenceSession(symbolic_matmul(rand((4, 3), 3)), device=self.device)
        (x,) = sess.get_inputs()
        self.assertEqual((x.name, x.type, x.shape), ("x", "tensor(float)", ["batch", "seq", 4]))
        (y,) = sess.get_outputs()
        self.assertEqual((y.name, y.type, y.shape), ("y", "tensor(float)", ["batch", "seq", 3]))
        values, indices = vkc.InferenceSession(topk(4), device=self.device).get_outputs()
        self.assertEqual((values.type, indices.type, indices.shape), ("tensor(float)", "tensor(int64)", [3, 4]))

    def test_symbolic_dims_compile_once_per_shape(self):
        w = rand((4, 3), 4)
        sess = vkc.InferenceSession(symbolic_matmul(w), device=self.device)
        for seq, seed in ((5, 10), (9, 11), (5, 12)):
            x = rand((2, seq, 4), seed)
            (y,) = sess.run(None, {"x": x})
            self.assertEqual(y.shape, (2, seq, 3))
            np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
        self.assertEqual(sess.specialization_count(), 2)
        self.assertIn("x f32[2x5x4]", sess.specialization())

    def test_topk_values_and_indices(self):
        sess = vkc.InferenceSession(topk(4), device=self.device)
        x = np.random.default_rng(5).permutation(30).reshape(3, 10).astype(np.float32)  # no ties
        values, indices = sess.run(None, {"x": x})
        expected = np.argsort(-x, axis=-1)[:, :4]
        self.assertEqual(indices.dtype, np.int64)
        np.testing.assert_array_equal(indices, expected)
        np.testing.assert_array_equal(values, np.take_along_axis(x, expected, axis=-1))
        (only,) = sess.run(["indices"], {"x": x})
        np.testing.assert_array_equal(only, expected)

    def test_bad_inputs_raise_value_error_with_vkc_message(self):
        sess = vkc.InferenceSession(add_relu(), device=self.device)
        a, b = rand((2, 3), 1), rand((2, 3), 2)
        cases = {
            "wrong shape": ({"a": a, "b": rand((3, 2), 3)}, "input 'b' dim 0 is 3, the model fixes it to 2"),
            "wrong rank": ({"a": a, "b": rand((6,), 3)}, "input 'b' has rank 1, the model expects 2"),
            "wrong dtype (a vkc type)": ({"a": a, "b": b.astype(np.int32)},
                                        "input 'b' has element type i32, the model expects f32"),
            "wrong dtype (float64)": ({"a": a, "b": b.astype(np.float64)},
                                      "input 'b' has numpy dtype float64, the model expects tensor(float)"),
            "missing input": ({"a": a}, "input 'b' is missing"),
            "unknown input": ({"a": a, "b": b, "c": b}, "the model has no input named 'c' (its inputs are: a, b)"),
        }
        for what, (feed, message) in cases.items():
            with self.subTest(what):
                with self.assertRaises(ValueError) as caught:
                    sess.run(None, feed)
                self.assertIn(message, str(caught.exception))
                self.assertNotIn("\n", str(caught.exception))
        with self.assertRaisesRegex(ValueError, "no output named 'z' \\(the outputs are: y\\)"):
            sess.run(["z"], {"a": a, "b": b})
        # The session still works after the errors.
        np.testing.assert_allclose(sess.run(None, {"a": a, "b": b})[0], np.maximum(a + b, 0), rtol=1e-6)

    def test_output_buffers_are_written_in_place(self):
        # Each bound output is written into the caller's array (poisoned with NaN first) and
        # returned as that same array; results equal the ordinary path's and numpy's.
        sess = vkc.InferenceSession(add_relu(), device=self.device)
        y = np.full((2, 3), np.nan, dtype=np.float32)
        for seed in (1, 3, 5):
            a, b = rand((2, 3), seed), rand((2, 3), seed + 1)
            y.fill(np.nan)
            (out,) = sess.run(None, {"a": a, "b": b}, output_buffers={"y": y})
            self.assertIs(out, y)
            np.testing.assert_array_equal(y, sess.run(None, {"a": a, "b": b})[0])
            np.testing.assert_allclose(y, np.maximum(a + b, 0), rtol=1e-6)
        # Only one of two outputs bound; named or not in output_names, it is written.
        sess = vkc.InferenceSession(topk(4), device=self.device)
        x = np.random.default_rng(6).permutation(30).reshape(3, 10).astype(np.float32)
        expected = np.argsort(-x, axis=-1)[:, :4]
        indices = np.full((3, 4), -7, dtype=np.int64)
        values, got = sess.run(None, {"x": x}, output_buffers={"indices": indices})
        self.assertIs(got, indices)
        np.testing.assert_array_equal(indices, expected)
        np.testing.assert_array_equal(values, np.take_along_axis(x, expected, axis=-1))
        indices.fill(-7)
        (only,) = sess.run(["values"], {"x": x}, output_buffers={"indices": indices})
        np.testing.assert_array_equal(only, np.take_along_axis(x, expected, axis=-1))
        np.testing.assert_array_equal(indices, expected)

    def test_large_output_buffer_and_symbolic_dims(self):
        # 2 MiB and more: the threaded copy. One buffer per shape, reused across runs.
        w = rand((4, 3), 30)
        sess = vkc.InferenceSession(symbolic_matmul(w), device=self.device)
        x = rand((2, 100000, 4), 31)
        y = np.full((2, 100000, 3), np.nan, dtype=np.float32)
        address = y.__array_interface__["data"][0]
        for step in range(2):
            x = rand((2, 100000, 4), 32 + step)
            y.fill(np.nan)
            (out,) = sess.run(None, {"x": x}, output_buffers={"y": y})
            self.assertIs(out, y)
            self.assertEqual(y.__array_interface__["data"][0], address)
            np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
            np.testing.assert_array_equal(y, sess.run(None, {"x": x})[0])

    def test_bad_output_buffers_raise_value_error(self):
        sess = vkc.InferenceSession(add_relu(), device=self.device)
        a, b = rand((2, 3), 1), rand((2, 3), 2)
        read_only = np.full((2, 3), np.nan, dtype=np.float32)
        read_only.setflags(write=False)
        cases = {
            "wrong shape": (np.zeros((3, 2), np.float32), "output_to_host 'y': expected f32 2x3, found f32 3x2"),
            "wrong vkc dtype": (np.zeros((2, 3), np.int32), "output_to_host 'y': expected f32 2x3, found i32 2x3"),
            "float64": (np.zeros((2, 3), np.float64), "output buffer 'y' has numpy dtype float64"),
            "not contiguous": (np.zeros((2, 6), np.float32)[:, ::2], "output buffer 'y' is not C-contiguous"),
            "Fortran order": (np.asfortranarray(np.zeros((2, 3), np.float32)), "output buffer 'y' is not C-contiguous"),
            "read-only": (read_only, "output buffer 'y' is a read-only array"),
            "a list": ([[0.0] * 3] * 2, "output buffer 'y' must be a numpy array, not list"),
        }
        for what, (buffer, message) in cases.items():
            with self.subTest(what):
                with self.assertRaises(ValueError) as caught:
                    sess.run(None, {"a": a, "b": b}, output_buffers={"y": buffer})
                self.assertIn(message, str(caught.exception))
                self.assertNotIn("\n", str(caught.exception))
        self.assertTrue(np.isnan(read_only).all())
        with self.assertRaisesRegex(ValueError, "output_to_host: no output named 'z'"):
            sess.run(None, {"a": a, "b": b}, output_buffers={"z": np.zeros((2, 3), np.float32)})
        with self.assertRaisesRegex(ValueError, "output_buffers must be a dict"):
            sess.run(None, {"a": a, "b": b}, output_buffers=[np.zeros((2, 3), np.float32)])
        np.testing.assert_allclose(sess.run(None, {"a": a, "b": b})[0], np.maximum(a + b, 0), rtol=1e-6)

    def test_failures_raise_runtime_error(self):
        with self.assertRaisesRegex(RuntimeError, "no-such-model.onnx"):
            vkc.InferenceSession(os.path.join(self.tmp.name, "no-such-model.onnx"), device=self.device)
        unsupported = model_bytes([helper.make_node("Acos", ["x"], ["y"])],
                                  [helper.make_tensor_value_info("x", F32, [4])],
                                  [helper.make_tensor_value_info("y", F32, [4])])
        sess = vkc.InferenceSession(unsupported, device=self.device)
        with self.assertRaisesRegex(RuntimeError, "Acos"):
            sess.run(None, {"x": rand((4,), 1)})

    def test_non_contiguous_and_dlpack_inputs(self):
        sess = vkc.InferenceSession(add_relu(), device=self.device)
        big = rand((2, 6), 7)
        a, b = big[:, ::2], rand((2, 3), 8)  # a is a strided view: made contiguous first
        self.assertFalse(a.flags["C_CONTIGUOUS"])
        expected = np.maximum(a + b, 0)
        np.testing.assert_allclose(sess.run(None, {"a": a, "b": b})[0], expected, rtol=1e-6)

        class Foreign:  # another library's CPU tensor, seen through DLPack only
            def __init__(self, array, device=(1, 0)):
                self.array, self.device = array, device

            def __dlpack__(self, stream=None):
                return self.array.__dlpack__()

            def __dlpack_device__(self):
                return self.device

        a2 = np.ascontiguousarray(a)
        for feed in ({"a": Foreign(a2), "b": b}, {"a": a2.__dlpack__(), "b": Foreign(b)}):
            np.testing.assert_allclose(sess.run(None, feed)[0], expected, rtol=1e-6)
        with self.assertRaisesRegex(ValueError, "input 'a' is a DLPack tensor on device type 2; vkc takes host"):
            sess.run(None, {"a": Foreign(a2, (2, 0)), "b": b})

    def test_one_session_from_eight_threads(self):
        w = rand((4, 3), 20)
        sess = vkc.InferenceSession(symbolic_matmul(w))  # its own device: used from many threads
        errors, checked = [], []

        def work(t):
            try:
                for i in range(12):
                    x = rand((1, 2 + (t + i) % 3, 4), 100 * t + i)
                    (y,) = sess.run(None, {"x": x})
                    np.testing.assert_allclose(y, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
                    checked.append(1)
            except Exception as e:  # noqa: BLE001 -- reported below
                errors.append("thread %d: %r" % (t, e))

        threads = [threading.Thread(target=work, args=(t,)) for t in range(8)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        self.assertEqual(errors, [])
        self.assertEqual(len(checked), 8 * 12)
        self.assertEqual(sess.specialization_count(), 3)

    def test_end_profiling_writes_one_event_per_dispatch(self):
        path = write(self.tmp.name, "topk.onnx", topk(3))
        dispatches = vkc.compile(path, device=self.device.name).dispatch_count
        options = vkc.SessionOptions()
        options.enable_profiling = True
        options.profile_file_prefix = os.path.join(self.tmp.name, "trace")
        sess = vkc.InferenceSession(path, options, device=self.device)
        x = rand((3, 10), 9)
        for _ in range(2):
            sess.run(None, {"x": x})
        trace = sess.end_profiling()
        self.assertTrue(trace.startswith(options.profile_file_prefix) and trace.endswith(".json"))
        with open(trace) as f:
            events = json.load(f)
        nodes = [e for e in events if e["cat"] == "Node"]
        self.assertEqual(len(nodes), 2 * dispatches)
        self.assertEqual(len([e for e in events if e["name"] == "model_run"]), 2)
        for e in nodes:
            self.assertEqual(e["ph"], "X")
            self.assertGreaterEqual(e["dur"], 0)
            for key in ("name", "ts", "pid", "tid", "args"):
                self.assertIn(key, e)
        self.assertEqual(vkc.InferenceSession(path, device=self.device).end_profiling(), "")

    def test_compile_save_load_and_report(self):
        w = rand((4, 3), 30)
        src = write(self.tmp.name, "mm.onnx", symbolic_matmul(w))
        out = os.path.join(self.tmp.name, "mm.vkcm")
        module = vkc.compile(src, out, device=self.device.name, input_shapes={"x": [1, 6, 4]})
        self.assertTrue(os.path.isfile(out))
        self.assertEqual(module.dispatch_count, 1)  # the relu fuses into the matmul
        self.assertEqual(module.barrier_count, 0)   # so nothing to wait for
        self.assertEqual(module.arena_bytes, 0)     # and no intermediate in memory
        self.assertEqual(module.inputs, [("x", "tensor(float)", [1, 6, 4])])
        report = module.report()
        self.assertIn("matmul", report.lower())
        self.assertEqual(vkc.load(out).report(), report)
        x = rand((1, 6, 4), 31)
        # The module's source graph on vkc's float64 reference interpreter, as vk-run --check uses it.
        reference = vkc.load(out).reference({"x": x})
        self.assertEqual(len(reference), 1)
        want = next(iter(reference.values()))
        self.assertEqual(want.dtype, np.float32)
        np.testing.assert_allclose(want, np.maximum(x @ w, 0), rtol=1e-5, atol=1e-6)
        for source in (out, vkc.load(out)):
            sess = vkc.InferenceSession(source, device=self.device)
            self.assertEqual(sess.get_inputs()[0].shape, [1, 6, 4])
            np.testing.assert_allclose(sess.run(None, {"x": x})[0], want, rtol=1e-5, atol=1e-6)
        with self.assertRaisesRegex(ValueError, "input 'x': expected shape 1x6x4, found 1x5x4"):
            sess.run(None, {"x": rand((1, 5, 4), 1)})

    def test_fp16_precision(self):
        w = rand((4, 3), 40)
        sess = vkc.InferenceSession(symbolic_matmul(w), device=self.device, precision="fp16")
        x = rand((1, 7, 4), 41)
        (y,) = sess.run(None, {"x": x})
        expected = np.maximum(x @ w, 0)
        self.assertLessEqual(np.abs(y - expected).max() / np.abs(expected).max(), 5e-3)

    def test_model_metadata(self):
        model = onnx.load_from_string(add_relu())
        model.producer_name, model.model_version, model.doc_string = "vkc-test", 7, "adds"
        helper.set_model_props(model, {"author": "tests"})
        meta = vkc.InferenceSession(model.SerializeToString(), device=self.device).get_modelmeta()
        self.assertEqual((meta.producer_name, meta.version, meta.description, meta.graph_name),
                         ("vkc-test", 7, "adds", "test"))
        self.assertEqual(meta.custom_metadata_map, {"author": "tests"})

    def test_gil_is_released_while_compiling_and_running(self):
        # A Python thread takes timestamps while the main thread is inside one call into vkc
        # (vkc.compile: opening a device, compiling). Were the GIL held there, the thread could
        # run only before the call or after it (a switch interval at most), never well inside.
        samples, stop = [], threading.Event()

        def sample():
            while not stop.is_set():
                samples.append(time.perf_counter())

        margin = 2 * sys.getswitchinterval()
        path = write(self.tmp.name, "gil.onnx", symbolic_matmul(rand((4, 3), 50)))
        sampler = threading.Thread(target=sample)
        sampler.start()
        try:
            # One compile of this small model can take less than 3 margins on a fast machine, so
            # compile new shapes (each a module of its own, not a cache hit) until they take longer.
            start = time.perf_counter()
            rows = 11
            while True:
                module = vkc.compile(path, device=self.device.name, input_shapes={"x": [3, rows, 4]})
                end = time.perf_counter()
                rows += 1
                if end - start > 6 * margin or rows > 60:
                    break
        finally:
            stop.set()
            sampler.join()
        self.assertGreater(end - start, 3 * margin, "too quick to tell")
        inside = [t for t in samples if start + margin < t < end - margin]
        self.assertGreater(len(inside), 100, "%d samples inside %.1f ms in vkc" % (len(inside), (end - start) * 1e3))
        self.assertGreaterEqual(module.dispatch_count, 1)

    def test_devices(self):
        found = vkc.devices()
        self.assertGreaterEqual(len(found), 1)
        names = [d["name"] for d in found]
        self.assertIn(self.device.name, names)
        self.assertEqual(vkc.get_available_providers(), ["VkcVulkanExecutionProvider"])


if __name__ == "__main__":
    unittest.main()

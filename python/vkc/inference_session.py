"""vkc.InferenceSession: ONNX Runtime's InferenceSession over vkc (the _vkc extension's Session:
vkc::ModelSession for models, vkc::Session for compiled modules)."""

import os
import shutil
import tempfile
import time
import warnings
import weakref

from . import _vkc
from .profiler import Profiler

PROVIDER = "VkcVulkanExecutionProvider"


class NodeArg:
    """An input or output as the model declares it: name, shape (ints; symbolic dims as their
    names; None for an unknown dim; None for the whole shape when the model gives no shape) and
    type ('tensor(float)', 'tensor(int64)', ...)."""

    __slots__ = ("name", "shape", "type")

    def __init__(self, name, type, shape):
        self.name, self.type, self.shape = name, type, shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)


class ModelMetadata:
    """As onnxruntime.ModelMetadata: producer_name, graph_name, graph_description, domain,
    description, version, custom_metadata_map."""

    def __init__(self, fields):
        self.producer_name = fields.get("producer_name", "")
        self.graph_name = fields.get("graph_name", "")
        self.graph_description = fields.get("graph_description", "")
        self.domain = fields.get("domain", "")
        self.description = fields.get("description", "")
        self.version = fields.get("version", 0)
        self.custom_metadata_map = dict(fields.get("custom_metadata_map", {}))


class SessionOptions:
    """The part of onnxruntime.SessionOptions vkc reads: enable_profiling and profile_file_prefix
    (an onnxruntime.SessionOptions is read the same way). The other attributes are accepted and
    ignored (vkc plans its own graph optimizations and threads)."""

    def __init__(self):
        self.enable_profiling = False
        self.profile_file_prefix = "vkc_profile"
        self.graph_optimization_level = None
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.log_severity_level = 2


class RunOptions:
    """Accepted for onnxruntime compatibility; vkc reads none of its fields."""

    def __init__(self):
        self.log_severity_level = 2
        self.run_tag = ""


class InferenceSession:
    """A model on a Vulkan device, as onnxruntime.InferenceSession.

    path_or_bytes: a .onnx or .vkir file, a .vkcm file or module directory, the bytes of an ONNX
    model, or a vkc.Module. vkc's own options are keywords: device (an index or a name substring;
    default VKC_DEVICE, else the best device; or a vkc.Device to share one between sessions that
    are used from one thread at a time), target (a target profile to compile for, default
    'host'), precision ('fp32' or 'fp16'), robust (bounds-checked buffer access, for untrusted
    models) and module_cache_dir (a directory of compiled specializations kept across processes).

    Models with symbolic dims are compiled for each new set of input shapes at first use and kept.
    One session may be used from several threads: its runs are serialized (one at a time).
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, *, device=None,
                 target=None, precision=None, robust=False, module_cache_dir=None, **kwargs):
        if kwargs:
            raise TypeError("InferenceSession: unknown keyword argument(s): %s" % ", ".join(sorted(kwargs)))
        for p in providers or []:
            name = p[0] if isinstance(p, tuple) else p
            if name not in (PROVIDER, "CPUExecutionProvider"):
                warnings.warn("vkc runs every model on %s; provider %r is ignored" % (PROVIDER, name))
        self._tmpdir = None
        if not isinstance(device, _vkc.Device):
            device = _vkc.Device("" if device is None else str(device), robust)
        elif robust:
            raise ValueError("robust applies when a Device is opened; pass vkc.Device(select, robust=True)")
        if isinstance(path_or_bytes, _vkc.Module):
            if target is not None or precision is not None:
                raise ValueError("target and precision apply when compiling a model; this is a compiled vkc.Module")
            self._session = _vkc.Session(path_or_bytes, device)
            self._model_path = "<vkc.Module>"
        else:
            if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
                # vkc reads models from files (and reads it again for each new specialization).
                self._tmpdir = tempfile.mkdtemp(prefix="vkc-model-")
                weakref.finalize(self, shutil.rmtree, self._tmpdir, True)  # when the session goes
                path = os.path.join(self._tmpdir, "model.onnx")
                with open(path, "wb") as f:
                    f.write(path_or_bytes)
            else:
                path = os.fspath(path_or_bytes)
            self._model_path = path
            self._session = _vkc.Session(path, device, target=target or "host",
                                         precision=precision or "fp32", module_cache_dir=module_cache_dir)
        self._inputs = [NodeArg(*t) for t in self._session.inputs()]
        self._outputs = [NodeArg(*t) for t in self._session.outputs()]
        profiling = bool(getattr(sess_options, "enable_profiling", False))
        prefix = getattr(sess_options, "profile_file_prefix", None) or "vkc_profile"
        self._profiler = Profiler(prefix) if profiling else None

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_modelmeta(self):
        """The ONNX model's metadata (empty fields for a compiled module, which keeps none)."""
        if self._model_path.endswith(".onnx"):
            return ModelMetadata(_vkc.read_model_metadata(self._model_path))
        return ModelMetadata({})

    def get_overridable_initializers(self):
        return []

    def get_providers(self):
        return [PROVIDER]

    def get_provider_options(self):
        return {PROVIDER: {"device": self._session.device_name()}}

    def get_session_options(self):
        options = SessionOptions()
        options.enable_profiling = self._profiler is not None
        if self._profiler:
            options.profile_file_prefix = self._profiler.prefix
        return options

    def run(self, output_names, input_feed, run_options=None, *, output_buffers=None):
        """The outputs named (all, in the model's order, for None or []) as a list of numpy
        arrays. input_feed maps each input's name to a numpy array of its type (or a DLPack
        tensor in CPU memory). Bad inputs raise ValueError, other failures RuntimeError.

        vkc: output_buffers maps output names to numpy arrays (writable, C-contiguous, the
        output's exact dtype and shape, else ValueError) that those outputs are written into
        instead of new arrays; such an output is returned as that same array. For large outputs
        run repeatedly: nothing is allocated per run."""
        if not isinstance(input_feed, dict):
            raise ValueError("input_feed must be a dict of input name -> array, not %s" % type(input_feed).__name__)
        if not output_names:
            output_names = None
        if self._profiler is None:
            return self._session.run(output_names, input_feed, False, output_buffers)
        start = time.perf_counter()
        outputs, timings = self._session.run(output_names, input_feed, True, output_buffers)
        self._profiler.record(start, time.perf_counter(), timings)
        return outputs

    def end_profiling(self):
        """Writes the profiled runs' dispatches as a Chrome trace JSON file and returns its path
        ("" when profiling is off, as onnxruntime)."""
        if self._profiler is None:
            return ""
        return self._profiler.write()

    def specialization(self):
        """vkc: the input shapes (and shape-deciding values) the last run was compiled for."""
        return self._session.specialization()

    def specialization_count(self):
        """vkc: how many specializations (one per set of input shapes) this session compiled."""
        return self._session.specialization_count()

    def device_name(self):
        return self._session.device_name()


def compile(model, output=None, *, device=None, target="host", precision="fp32", input_shapes=None):
    """Compiles a .onnx/.vkir file (or ONNX model bytes) to a vkc.Module for a device (or a named
    target profile: 'lavapipe', 'nvidia', ...); with output, writes it there too (a .vkcm file
    for a path ending in .vkcm, else a module directory). input_shapes pins dynamic dims:
    {name: [dims]}. Module.report() gives vk-compile --report's table."""
    tmp = None
    try:
        if isinstance(model, (bytes, bytearray, memoryview)):
            tmp = tempfile.TemporaryDirectory(prefix="vkc-model-")
            path = os.path.join(tmp.name, "model.onnx")
            with open(path, "wb") as f:
                f.write(model)
        else:
            path = os.fspath(model)
        module = _vkc.compile_module(path, device="" if device is None else str(device), target=target,
                                     precision=precision,
                                     input_shapes={k: [int(d) for d in v] for k, v in (input_shapes or {}).items()})
    finally:
        if tmp is not None:
            tmp.cleanup()
    if output is not None:
        module.save(os.fspath(output))
    return module

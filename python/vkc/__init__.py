"""vkc: Vulkan compute for tensor programs, from Python.

ONNX Runtime's shape, so that code written for onnxruntime runs by changing the import::

    import vkc as ort
    sess = ort.InferenceSession("model.onnx")
    (probs,) = sess.run(None, {"image": image})

and the rest of vkc: compile() to a .vkcm module, load() one, devices(), Module.report().
docs/python.md describes the API.
"""

from ._vkc import Device, Module, devices
from ._vkc import load_module as load
from .inference_session import InferenceSession, NodeArg, RunOptions, SessionOptions, compile

__all__ = ["InferenceSession", "Device", "NodeArg", "SessionOptions", "RunOptions", "Module", "compile", "load", "devices",
           "get_available_providers", "get_device"]

PROVIDER = "VkcVulkanExecutionProvider"


def get_available_providers():
    """As onnxruntime.get_available_providers(): vkc's one execution provider."""
    return [PROVIDER]


def get_device():
    """As onnxruntime.get_device()."""
    return "GPU"

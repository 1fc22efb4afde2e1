#!/usr/bin/python3
"""Writes a small MobileNetV2-like ONNX classifier with seeded random weights.

torch is not available here, so the graph is built the way a PyTorch export of such a network
looks (Conv + BatchNormalization + Clip(0, 6), depthwise convs, residual Add, GlobalAveragePool,
Flatten, Gemm, Softmax), with the onnx helper API. The weights are random: the point is running
an exporter-shaped model through vk-run, not the classification.

    /usr/bin/python3 samples/model_runner/make_mobilenet_like.py [OUT.onnx]

    input [1,3,96,96] -> stem conv 3x3 s2 (16) -> 3 inverted-residual blocks
      (1x1 expand x4, depthwise 3x3, 1x1 project; residual Add where shapes allow)
      -> conv 1x1 (64) -> global average pool -> Gemm 64->100 -> Softmax "probabilities" [1,100]
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

rng = np.random.default_rng(2024)
nodes, inits = [], []


def const(name, array):
    inits.append(numpy_helper.from_array(np.asarray(array, dtype=np.float32), name))
    return name


def conv_bn(x, name, cin, cout, k=1, stride=1, groups=1, relu6=True):
    """Conv (no bias, as exporters emit before BN) + BatchNormalization [+ Clip(0, 6)]."""
    fan_in = cin // groups * k * k
    w = const(name + ".weight", rng.normal(0, np.sqrt(2 / fan_in), (cout, cin // groups, k, k)))
    nodes.append(helper.make_node("Conv", [x, w], [name], name=name, kernel_shape=[k, k],
                                  strides=[stride, stride], pads=[k // 2] * 4, group=groups))
    bn = [const(f"{name}.bn.{p}", v) for p, v in [
        ("scale", rng.uniform(0.5, 1.5, cout)), ("bias", rng.normal(0, 0.1, cout)),
        ("mean", rng.normal(0, 0.1, cout)), ("var", rng.uniform(0.5, 1.5, cout))]]
    nodes.append(helper.make_node("BatchNormalization", [name] + bn, [name + ".bn"], name=name + ".bn",
                                  epsilon=1e-5))
    if not relu6:
        return name + ".bn"
    nodes.append(helper.make_node("Clip", [name + ".bn", "zero", "six"], [name + ".relu6"], name=name + ".relu6"))
    return name + ".relu6"


def inverted_residual(x, name, cin, cout, stride, expand=4):
    hidden = cin * expand
    h = conv_bn(x, name + ".expand", cin, hidden)
    h = conv_bn(h, name + ".dw", hidden, hidden, k=3, stride=stride, groups=hidden)
    h = conv_bn(h, name + ".project", hidden, cout, relu6=False)  # linear bottleneck
    if stride == 1 and cin == cout:
        nodes.append(helper.make_node("Add", [x, h], [name + ".add"], name=name + ".add"))
        return name + ".add"
    return h


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "mobilenet_like.onnx"
    const("zero", 0.0)
    const("six", 6.0)
    h = conv_bn("input", "stem", 3, 16, k=3, stride=2)            # [1,16,48,48]
    h = inverted_residual(h, "block1", 16, 16, stride=1)           # residual
    h = inverted_residual(h, "block2", 16, 24, stride=2)           # [1,24,24,24]
    h = inverted_residual(h, "block3", 24, 24, stride=1)           # residual
    h = conv_bn(h, "head", 24, 64)
    nodes.append(helper.make_node("GlobalAveragePool", [h], ["pool"], name="pool"))
    nodes.append(helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1))
    fc_w = const("classifier.weight", rng.normal(0, 0.3, (100, 64)))
    fc_b = const("classifier.bias", rng.normal(0, 0.1, 100))
    nodes.append(helper.make_node("Gemm", ["flat", fc_w, fc_b], ["logits"], name="classifier", transB=1))
    nodes.append(helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=1))

    graph = helper.make_graph(
        nodes, "mobilenet_like",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, 96, 96])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, [1, 100])], inits)
    model = helper.make_model(graph, producer_name="vkc samples/model_runner/make_mobilenet_like.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what Debian 12's libonnx reads
    onnx.checker.check_model(model)
    onnx.save(model, out)
    print(f"wrote {out}: {len(nodes)} nodes, {sum(int(np.prod(t.dims)) for t in inits)} weights")


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""A BERT-style encoder as ONNX, with random weights and no PyTorch: for timing vkc's compile,
module size and cache hits on any machine (bench/RESULTS.md, session 25).

Each layer: q/k/v projections with biases, heads split by Reshape/Transpose, scores scaled and
masked, Softmax, the heads merged, an output projection, residual and LayerNormalization, an FFN
(4x hidden, ReLU) and a second residual and LayerNormalization. Inputs: x f32[B,S,D] and an
additive mask f32[B,1,1,S].

    /usr/bin/python3 bench/make_encoder_onnx.py OUT.onnx [--batch 8] [--seq 128] [--hidden 768]
                                                [--heads 12] [--layers 12]

12 layers at hidden 768 hold 340 MB of weights (85M parameters).
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def build(batch, seq, hidden, heads, layers):
    head = hidden // heads
    rng = np.random.default_rng(0)
    nodes, inits = [], []

    def weight(name, shape):
        inits.append(numpy_helper.from_array((rng.standard_normal(shape) * 0.02).astype(np.float32), name))
        return name

    def node(op, inputs, output, **attrs):
        nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output

    inits.append(numpy_helper.from_array(np.array([batch, seq, heads, head], dtype=np.int64), "split_shape"))
    inits.append(numpy_helper.from_array(np.array([batch, seq, hidden], dtype=np.int64), "merge_shape"))
    inits.append(numpy_helper.from_array(np.array(np.sqrt(head), dtype=np.float32), "scale"))
    cur = "x"
    for l in range(layers):
        heads_of = {}
        for n in "qkv":
            p = node("MatMul", [cur, weight(f"W{n}{l}", (hidden, hidden))], f"{n}m{l}")
            p = node("Add", [p, weight(f"b{n}{l}", (hidden,))], f"{n}a{l}")
            p = node("Reshape", [p, "split_shape"], f"{n}r{l}")
            heads_of[n] = node("Transpose", [p], f"{n}t{l}", perm=[0, 2, 1, 3])
        kt = node("Transpose", [heads_of["k"]], f"ktt{l}", perm=[0, 1, 3, 2])
        s = node("MatMul", [heads_of["q"], kt], f"s{l}")
        s = node("Div", [s, "scale"], f"ss{l}")
        s = node("Add", [s, "mask"], f"sm{l}")
        p = node("Softmax", [s], f"p{l}", axis=-1)
        o = node("MatMul", [p, heads_of["v"]], f"o{l}")
        o = node("Transpose", [o], f"ot{l}", perm=[0, 2, 1, 3])
        o = node("Reshape", [o, "merge_shape"], f"or{l}")
        o = node("MatMul", [o, weight(f"Wo{l}", (hidden, hidden))], f"po{l}")
        o = node("Add", [o, weight(f"bo{l}", (hidden,))], f"pob{l}")
        o = node("Add", [o, cur], f"res{l}")
        ln = node("LayerNormalization", [o, weight(f"g{l}", (hidden,)), weight(f"be{l}", (hidden,))], f"ln{l}",
                  axis=-1)
        f = node("MatMul", [ln, weight(f"W1{l}", (hidden, 4 * hidden))], f"f1{l}")
        f = node("Add", [f, weight(f"b1{l}", (4 * hidden,))], f"f1b{l}")
        f = node("Relu", [f], f"ge{l}")
        f = node("MatMul", [f, weight(f"W2{l}", (4 * hidden, hidden))], f"f2{l}")
        f = node("Add", [f, weight(f"b2{l}", (hidden,))], f"f2b{l}")
        f = node("Add", [f, ln], f"res2{l}")
        cur = node("LayerNormalization", [f, weight(f"g2{l}", (hidden,)), weight(f"be2{l}", (hidden,))],
                   f"ln2{l}", axis=-1)
    graph = helper.make_graph(
        nodes, "encoder",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [batch, seq, hidden]),
         helper.make_tensor_value_info("mask", TensorProto.FLOAT, [batch, 1, 1, seq])],
        [helper.make_tensor_value_info(cur, TensorProto.FLOAT, [batch, seq, hidden])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--batch", type=int, default=8)
    ap.add_argument("--seq", type=int, default=128)
    ap.add_argument("--hidden", type=int, default=768)
    ap.add_argument("--heads", type=int, default=12)
    ap.add_argument("--layers", type=int, default=12)
    a = ap.parse_args()
    onnx.save(build(a.batch, a.seq, a.hidden, a.heads, a.layers), a.out)


if __name__ == "__main__":
    main()

#!/usr/bin/python3
"""Trains the digits sample's small CNN with numpy and exports it to ONNX.

Run with Debian's interpreter (it has numpy and onnx):  /usr/bin/python3 samples/digits/train.py

Data: the 1797 8x8 handwritten digits that ship with scikit-learn (digits.csv.gz: 64 pixels in
0..16, then the label). A seeded permutation holds out 360 of them; only the rest is trained on.

Model (logits; argmax is the class):
    x [N,1,8,8] -> Conv 1->8 3x3 pad 1 -> Relu -> MaxPool 2x2 -> Flatten [N,128] -> Gemm 128->10

Writes next to this script (all committed; CI only runs the C++ app on them):
    digits_cnn.onnx           the model, batch dim symbolic ("N"), opset 13, ~5 KB
    heldout_x.npy             float32 [360,1,8,8], pixels scaled to [0,1]
    heldout_labels.npy        int64 [360]
    heldout_numpy_pred.npy    int64 [360], the numpy model's predictions (float32 forward pass)
"""
import gzip
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
DIGITS = "/usr/lib/python3/dist-packages/sklearn/datasets/data/digits.csv.gz"
SEED = 8
HELD_OUT = 360
FILTERS = 8


def load_digits():
    with gzip.open(DIGITS, "rt") as f:
        data = np.loadtxt(f, delimiter=",")
    x = (data[:, :64] / 16.0).reshape(-1, 1, 8, 8)
    y = data[:, 64].astype(np.int64)
    return x, y


def im2col(x):
    """[N,1,8,8] -> [N,64,9]: the 3x3 neighbourhood (zero padded) of every pixel."""
    p = np.pad(x[:, 0], ((0, 0), (1, 1), (1, 1)))
    cols = [p[:, i:i + 8, j:j + 8] for i in range(3) for j in range(3)]
    return np.stack(cols, axis=-1).reshape(x.shape[0], 64, 9)


def forward(params, x):
    """Returns logits and what the backward pass needs. Works in the dtype of params/x."""
    w1, b1, w2, b2 = params
    cols = im2col(x)                                   # [N,64,9]
    conv = cols @ w1.reshape(FILTERS, 9).T + b1        # [N,64,F], pixel-major
    conv = conv.transpose(0, 2, 1).reshape(-1, FILTERS, 8, 8)
    act = np.maximum(conv, 0)
    win = act.reshape(-1, FILTERS, 4, 2, 4, 2)         # 2x2 windows
    pooled = win.max(axis=(3, 5))                      # [N,F,4,4]
    flat = pooled.reshape(-1, FILTERS * 16)            # ONNX Flatten order (C,H,W)
    logits = flat @ w2.T + b2                          # Gemm transB=1: w2 is [10,128]
    return logits, (cols, conv, win, pooled, flat)


def backward(params, x, y, cache, logits):
    w1, b1, w2, b2 = params
    cols, conv, win, pooled, flat = cache
    n = x.shape[0]
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    d = p.copy()
    d[np.arange(n), y] -= 1
    d /= n                                             # mean cross-entropy
    gw2 = d.T @ flat
    gb2 = d.sum(axis=0)
    dpool = (d @ w2).reshape(pooled.shape)
    # Max pool: the gradient goes to the window's maximum (ties share it; rare with real data).
    mask = win == pooled[:, :, :, None, :, None]
    dact = (mask * dpool[:, :, :, None, :, None]).reshape(conv.shape)
    dconv = dact * (conv > 0)
    dconv = dconv.reshape(n, FILTERS, 64).transpose(0, 2, 1)   # [N,64,F]
    gw1 = np.einsum("npf,npk->fk", dconv, cols).reshape(FILTERS, 1, 3, 3)
    gb1 = dconv.sum(axis=(0, 1))
    return [gw1, gb1, gw2, gb2]


def train(x, y, rng):
    params = [rng.normal(0, np.sqrt(2 / 9), (FILTERS, 1, 3, 3)), np.zeros(FILTERS),
              rng.normal(0, np.sqrt(1 / (FILTERS * 16)), (10, FILTERS * 16)), np.zeros(10)]
    m = [np.zeros_like(q) for q in params]
    v = [np.zeros_like(q) for q in params]
    lr, b1, b2, step = 0.01, 0.9, 0.999, 0
    for epoch in range(60):
        order = rng.permutation(len(x))
        for start in range(0, len(x), 64):
            idx = order[start:start + 64]
            logits, cache = forward(params, x[idx])
            grads = backward(params, x[idx], y[idx], cache, logits)
            step += 1
            for i, g in enumerate(grads):  # Adam
                m[i] = b1 * m[i] + (1 - b1) * g
                v[i] = b2 * v[i] + (1 - b2) * g * g
                mh, vh = m[i] / (1 - b1 ** step), v[i] / (1 - b2 ** step)
                params[i] -= lr * mh / (np.sqrt(vh) + 1e-8)
        if epoch % 20 == 19:
            acc = (forward(params, x)[0].argmax(1) == y).mean()
            print(f"epoch {epoch + 1}: train accuracy {acc:.4f}")
    return [q.astype(np.float32) for q in params]


def export(params, path):
    w1, b1, w2, b2 = params
    inits = [numpy_helper.from_array(a, n) for a, n in
             [(w1, "conv.w"), (b1, "conv.b"), (w2, "fc.w"), (b2, "fc.b")]]
    nodes = [
        helper.make_node("Conv", ["image", "conv.w", "conv.b"], ["conv"], name="conv",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["conv"], ["relu"], name="relu"),
        helper.make_node("MaxPool", ["relu"], ["pool"], name="pool", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Flatten", ["pool"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
    ]
    graph = helper.make_graph(
        nodes, "digits_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["N", 1, 8, 8])],
        [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["N", 10])], inits)
    model = helper.make_model(graph, producer_name="vkc samples/digits/train.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8  # what Debian 12's libonnx reads
    onnx.checker.check_model(model)
    onnx.save(model, path)


def main():
    rng = np.random.default_rng(SEED)
    x, y = load_digits()
    perm = rng.permutation(len(x))
    test, tr = perm[:HELD_OUT], perm[HELD_OUT:]
    params = train(x[tr], y[tr], rng)

    # The reference predictions come from the exported float32 weights in a float32 forward pass,
    # the arithmetic the GPU does, so the comparison is about vkc, not about the rounding of export.
    xt = x[test].astype(np.float32)
    logits, _ = forward(params, xt)
    pred = logits.argmax(1).astype(np.int64)
    top2 = np.sort(logits, axis=1)[:, -2:]
    print(f"held-out accuracy {(pred == y[test]).mean():.4f} on {HELD_OUT} digits; "
          f"smallest top-2 logit margin {float((top2[:, 1] - top2[:, 0]).min()):.2e}")

    export(params, os.path.join(HERE, "digits_cnn.onnx"))
    np.save(os.path.join(HERE, "heldout_x.npy"), xt)
    np.save(os.path.join(HERE, "heldout_labels.npy"), y[test])
    np.save(os.path.join(HERE, "heldout_numpy_pred.npy"), pred)
    print("wrote", ", ".join(["digits_cnn.onnx", "heldout_x.npy", "heldout_labels.npy", "heldout_numpy_pred.npy"]))


if __name__ == "__main__":
    main()

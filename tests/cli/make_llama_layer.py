# Writes a LLaMA-style decoder layer as torch's TorchScript exporter writes it (opset 17), with
# seeded random weights: RMSNorm, rotary embeddings (rotate_half as a concat of a negated slice and
# a slice), grouped-query attention (repeat_kv as Unsqueeze, Expand, Reshape), an additive causal
# mask, SwiGLU. Usage: make_llama_layer.py OUT.onnx (run by llama_layer_test.sh).
import sys
import numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
S, D, H, KV, HD, F = 16, 64, 4, 2, 16, 128
rng = np.random.default_rng(0)
nodes, inits = [], []
def c(name, arr):
    inits.append(nh.from_array(np.asarray(arr), name)); return name
def n(op, ins, outs, **kw):
    nodes.append(h.make_node(op, ins, outs, **kw)); return outs[0]
def rmsnorm(x, tag):
    p = n("Pow", [x, c(tag+"_two", np.array(2.0, np.float32))], [tag+"_p"])
    m = n("ReduceMean", [p], [tag+"_m"], axes=[-1], keepdims=1)
    a = n("Add", [m, c(tag+"_eps", np.array(1e-6, np.float32))], [tag+"_a"])
    s = n("Sqrt", [a], [tag+"_s"]); r = n("Reciprocal", [s], [tag+"_r"])
    y = n("Mul", [x, r], [tag+"_y"])
    return n("Mul", [y, c(tag+"_w", (1 + 0.1*rng.standard_normal(D)).astype(np.float32))], [tag+"_o"])
def lin(x, k, m, tag):
    return n("MatMul", [x, c(tag+"_W", (rng.standard_normal((k, m))/np.sqrt(k)).astype(np.float32))], [tag])
def heads(x, nh_, tag):
    r = n("Reshape", [x, c(tag+"_shape", np.array([1, S, nh_, HD], np.int64))], [tag+"_r"])
    return n("Transpose", [r], [tag+"_t"], perm=[0, 2, 1, 3])
inv = 1.0 / (10000 ** (np.arange(0, HD, 2) / HD)); t = np.arange(S)[:, None] * inv[None]
emb = np.concatenate([t, t], -1)
cos = c("cos", np.cos(emb)[None, None].astype(np.float32)); sin = c("sin", np.sin(emb)[None, None].astype(np.float32))
def rope(x, tag):
    x1 = n("Slice", [x, c(tag+"s0", np.array([0], np.int64)), c(tag+"e0", np.array([HD//2], np.int64)), c(tag+"a0", np.array([3], np.int64))], [tag+"_x1"])
    x2 = n("Slice", [x, c(tag+"s1", np.array([HD//2], np.int64)), c(tag+"e1", np.array([HD], np.int64)), c(tag+"a1", np.array([3], np.int64))], [tag+"_x2"])
    rot = n("Concat", [n("Neg", [x2], [tag+"_n"]), x1], [tag+"_rot"], axis=-1)
    return n("Add", [n("Mul", [x, cos], [tag+"_xc"]), n("Mul", [rot, sin], [tag+"_rs"])], [tag+"_rope"])
def repeat_kv(x, tag):
    u = n("Unsqueeze", [x, c(tag+"_ax", np.array([2], np.int64))], [tag+"_u"])
    e = n("Expand", [u, c(tag+"_es", np.array([1, KV, H//KV, S, HD], np.int64))], [tag+"_e"])
    return n("Reshape", [e, c(tag+"_rs2", np.array([1, H, S, HD], np.int64))], [tag+"_rep"])
x = "x"
hn = rmsnorm(x, "ln1")
q = rope(heads(lin(hn, D, H*HD, "q"), H, "qh"), "qr")
k = repeat_kv(rope(heads(lin(hn, D, KV*HD, "k"), KV, "kh"), "kr"), "kk")
v = repeat_kv(heads(lin(hn, D, KV*HD, "v"), KV, "vh"), "vv")
kt = n("Transpose", [k], ["kt"], perm=[0, 1, 3, 2])
sc = n("Mul", [n("MatMul", [q, kt], ["qk"]), c("scale", np.array(1/np.sqrt(HD), np.float32))], ["sc"])
mask = np.triu(np.full((S, S), np.finfo(np.float32).min, np.float32), 1)[None, None]
sc = n("Add", [sc, c("causal", mask)], ["scm"])
p = n("Softmax", [sc], ["p"], axis=-1)
o = n("MatMul", [p, v], ["pv"])
o = n("Reshape", [n("Transpose", [o], ["ot"], perm=[0, 2, 1, 3]), c("oshape", np.array([1, S, H*HD], np.int64))], ["or"])
x2 = n("Add", [x, lin(o, H*HD, D, "o")], ["res1"])
hn2 = rmsnorm(x2, "ln2")
g = lin(hn2, D, F, "gate"); u = lin(hn2, D, F, "up")
silu = n("Mul", [g, n("Sigmoid", [g], ["sg"])], ["silu"])
y = n("Add", [x2, lin(n("Mul", [silu, u], ["gu"]), F, D, "down")], ["y"])
graph = h.make_graph(nodes, "llama_layer", [h.make_tensor_value_info("x", T.FLOAT, [1, S, D])],
                     [h.make_tensor_value_info("y", T.FLOAT, [1, S, D])], inits)
m = h.make_model(graph, opset_imports=[h.make_opsetid("", 17)]); m.ir_version = 8
onnx.checker.check_model(m); onnx.save(m, sys.argv[1])

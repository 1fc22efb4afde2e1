#!/usr/bin/python3
"""Builds the charlm sample's ONNX decode-step graph (one token per execution, KV cache in and out).

Run with Debian's interpreter (numpy + onnx):

    /usr/bin/python3 samples/charlm/export_onnx.py                    # charlm.npz -> charlm_decode.onnx, charlm_vocab.txt
    /usr/bin/python3 samples/charlm/export_onnx.py --reference DIR    # also DIR/ref_*.npy (float64 numpy forward)
    /usr/bin/python3 samples/charlm/export_onnx.py --gpt2-size --out gpt2_decode.onnx [--ctx 256]
                                                                     # GPT-2-small-sized, seeded random weights

The graph has a FIXED context T (the cache size), so one compiled module serves every token:

    inputs   token int64 [1], pos int64 [1] (the token's position, 0..T-1),
             past_k<l>, past_v<l> float [H, T, dh] for each layer l
    outputs  topk_values float [1, K], topk_indices int64 [1, K]  (vkc's TopK over the logits),
             present_k<l>, present_v<l> float [H, T, dh]           (the caches with this token's k, v)

The token's k and v are written at `pos` with Where(Equal(arange(T), pos), new, past), and the
attention reads the whole cache with the positions after `pos` masked (Where(Greater(arange(T),
pos), -1e9, scores)): no op takes its shape from `pos`, so vkc never needs its value to compile.
A prompt is fed the same way, one decode step per character (no separate prefill graph).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

import model

HERE = os.path.dirname(os.path.abspath(__file__))
OPSET = 17  # Debian's python3-onnx (1.12) knows up to 17: GELU is spelled out, as the TorchScript exporter does


def build_graph(params, heads, ctx, top_k, name):
    d = params["wte"].shape[1]
    dh = d // heads
    layers = model.layer_count(params)
    nodes, inits = [], []
    counter = [0]

    def init(nm, array):
        inits.append(numpy_helper.from_array(np.asarray(array), nm))
        return nm

    def node(op, ins, n_out=1, **attrs):
        counter[0] += 1
        outs = [f"{op.lower()}_{counter[0]}" + (f"_{i}" if n_out > 1 else "") for i in range(n_out)]
        nodes.append(helper.make_node(op, ins, outs, name=f"{op}_{counter[0]}", **attrs))
        return outs if n_out > 1 else outs[0]

    f32 = lambda a: np.asarray(a, dtype=np.float32)
    init("wte", f32(params["wte"]))
    init("wpe", f32(params["wpe"][:ctx]))
    init("positions_col", np.arange(ctx, dtype=np.int64).reshape(1, ctx, 1))
    init("positions", np.arange(ctx, dtype=np.int64))
    init("masked", f32(-1e9))
    init("scale", f32(1.0 / np.sqrt(dh)))
    init("qkv_split", np.array([d, d, d], dtype=np.int64))
    init("head_shape", np.array([heads, 1, dh], dtype=np.int64))
    init("row_shape", np.array([1, d], dtype=np.int64))
    init("k", np.array([top_k], dtype=np.int64))
    init("half", f32(0.5))
    init("one", f32(1.0))
    init("gelu_c", f32(model.GELU_C))
    init("gelu_a", f32(0.044715))

    def gelu(t):  # 0.5 t (1 + tanh(sqrt(2/pi) (t + 0.044715 t^3))), GPT-2's form
        cube = node("Mul", [node("Mul", [t, t]), t])
        inner = node("Mul", [node("Add", [t, node("Mul", [cube, "gelu_a"])]), "gelu_c"])
        return node("Mul", [node("Mul", [t, "half"]), node("Add", [node("Tanh", [inner]), "one"])])

    x = node("Add", [node("Gather", ["wte", "token"]), node("Gather", ["wpe", "pos"])])  # [1, d]
    write_here = node("Equal", ["positions_col", "pos"])  # [1, T, 1]
    hidden = node("Greater", ["positions", "pos"])        # [T]
    outputs = []
    for l in range(layers):
        p = f"h{l}."
        for n in ("ln1_g", "ln1_b", "wqkv", "bqkv", "wo", "bo", "ln2_g", "ln2_b", "w1", "b1", "w2", "b2"):
            init(p + n, f32(params[p + n]))
        a = node("LayerNormalization", [x, p + "ln1_g", p + "ln1_b"], axis=-1, epsilon=model.EPS)
        qkv = node("Add", [node("MatMul", [a, p + "wqkv"]), p + "bqkv"])
        q, k, v = (node("Reshape", [t, "head_shape"]) for t in node("Split", [qkv, "qkv_split"], 3, axis=1))
        k_all = node("Where", [write_here, k, f"past_k{l}"])  # [H, T, dh]
        v_all = node("Where", [write_here, v, f"past_v{l}"])
        nodes.append(helper.make_node("Identity", [k_all], [f"present_k{l}"], name=f"present_k{l}"))
        nodes.append(helper.make_node("Identity", [v_all], [f"present_v{l}"], name=f"present_v{l}"))
        s = node("Mul", [node("MatMul", [q, node("Transpose", [k_all], perm=[0, 2, 1])]), "scale"])  # [H, 1, T]
        att = node("Softmax", [node("Where", [hidden, "masked", s])], axis=-1)
        o = node("Reshape", [node("MatMul", [att, v_all]), "row_shape"])  # [1, d]
        x = node("Add", [x, node("Add", [node("MatMul", [o, p + "wo"]), p + "bo"])])
        m = node("LayerNormalization", [x, p + "ln2_g", p + "ln2_b"], axis=-1, epsilon=model.EPS)
        h = gelu(node("Add", [node("MatMul", [m, p + "w1"]), p + "b1"]))
        x = node("Add", [x, node("Add", [node("MatMul", [h, p + "w2"]), p + "b2"])])
        outputs += [f"present_k{l}", f"present_v{l}"]
    init("lnf_g", f32(params["lnf_g"]))
    init("lnf_b", f32(params["lnf_b"]))
    xf = node("LayerNormalization", [x, "lnf_g", "lnf_b"], axis=-1, epsilon=model.EPS)
    logits = node("Gemm", [xf, "wte"], transB=1)  # tied: [1, V]
    nodes.append(helper.make_node("TopK", [logits, "k"], ["topk_values", "topk_indices"], name="TopK_sample",
                                  axis=-1, largest=1, sorted=1))

    cache = [heads, ctx, dh]
    g_inputs = [helper.make_tensor_value_info("token", TensorProto.INT64, [1]),
                helper.make_tensor_value_info("pos", TensorProto.INT64, [1])]
    for l in range(layers):
        g_inputs += [helper.make_tensor_value_info(f"past_k{l}", TensorProto.FLOAT, cache),
                     helper.make_tensor_value_info(f"past_v{l}", TensorProto.FLOAT, cache)]
    g_outputs = [helper.make_tensor_value_info("topk_values", TensorProto.FLOAT, [1, top_k]),
                 helper.make_tensor_value_info("topk_indices", TensorProto.INT64, [1, top_k])]
    g_outputs += [helper.make_tensor_value_info(o, TensorProto.FLOAT, cache) for o in outputs]
    graph = helper.make_graph(nodes, name, g_inputs, g_outputs, inits)
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)], producer_name="vkc charlm sample")
    onnx.checker.check_model(m)
    return m


def write_reference(params, heads, ctx, top_k, tokens, out_dir):
    """The float64 numpy decode of `tokens` (fed one per step from position 0): the logits and the
    top-k of every step, for the sample's --check."""
    p64 = {k: v.astype(np.float64) for k, v in params.items() if k not in ("vocab", "hparams")}
    layers, dh = model.layer_count(p64), p64["wte"].shape[1] // heads
    past_k = np.zeros((layers, heads, ctx, dh))
    past_v = np.zeros_like(past_k)
    logits = []
    for pos, tok in enumerate(tokens):
        lg, past_k, past_v = model.decode_step(p64, heads, tok, pos, past_k, past_v)
        logits.append(lg)
    logits = np.array(logits)
    order = np.argsort(-logits, axis=1, kind="stable")[:, :top_k]
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "ref_tokens.npy"), np.asarray(tokens, dtype=np.int64))
    # Computed in float64, stored as float32 (vkc's .npy reader takes no f8; 6e-8 is far below the check's 1e-4).
    np.save(os.path.join(out_dir, "ref_logits.npy"), logits.astype(np.float32))
    np.save(os.path.join(out_dir, "ref_topk_values.npy"), np.take_along_axis(logits, order, 1).astype(np.float32))
    np.save(os.path.join(out_dir, "ref_topk_indices.npy"), order.astype(np.int64))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--weights", default=os.path.join(HERE, "charlm.npz"))
    ap.add_argument("--out", default=os.path.join(HERE, "charlm_decode.onnx"))
    ap.add_argument("--top-k", type=int, default=None, help="K of the graph's TopK (8; 40 with --gpt2-size)")
    ap.add_argument("--reference", metavar="DIR", help="also write the float64 reference of a teacher-forced decode")
    ap.add_argument("--gpt2-size", action="store_true",
                    help="random weights of GPT-2 small's size (12 layers, d 768, 12 heads, vocab 50257)")
    ap.add_argument("--ctx", type=int, default=None, help="context (cache) size T (charlm: 64; --gpt2-size: 256)")
    ap.add_argument("--layers", type=int, default=12, help="with --gpt2-size (fewer for a quick test)")
    ap.add_argument("--d-model", type=int, default=768, help="with --gpt2-size")
    ap.add_argument("--vocab", type=int, default=50257, help="with --gpt2-size")
    args = ap.parse_args()

    if args.gpt2_size:
        ctx = args.ctx or 256
        heads, top_k = args.d_model // 64, args.top_k or 40
        params = gpt2_sized_params(args.vocab, args.d_model, args.layers, ctx)
    else:
        w = np.load(args.weights)
        d, layers, heads, train_ctx, ff = (int(v) for v in w["hparams"])
        ctx, top_k = args.ctx or train_ctx, args.top_k or 8
        if ctx > train_ctx:
            raise SystemExit(f"--ctx {ctx}: the model was trained with context {train_ctx}")
        params = {k: w[k] for k in w.files if k not in ("vocab", "hparams")}
        vocab = "".join(chr(c) for c in w["vocab"])
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        # One code point per line (the newline character too): the C++ sample reads this.
        with open(os.path.join(os.path.dirname(os.path.abspath(args.out)), "charlm_vocab.txt"), "w") as f:
            f.write("".join(f"{ord(c)}\n" for c in vocab))
    m = build_graph(params, heads, ctx, top_k, "gpt2_sized_decode" if args.gpt2_size else "charlm_decode")
    onnx.save(m, args.out)
    print(f"wrote {args.out}: {model.layer_count(params)} layers, d {params['wte'].shape[1]}, {heads} heads, "
          f"vocab {params['wte'].shape[0]}, context {ctx}, top-k {top_k}")
    if args.reference:
        if args.gpt2_size:
            raise SystemExit("--reference is for the charlm model")
        text = "This License"
        tokens = [vocab.index(c) for c in text]
        rng = np.random.default_rng(1)
        tokens += list(rng.integers(0, len(vocab), ctx - len(tokens)))  # fill the whole cache
        write_reference(params, heads, ctx, top_k, tokens, args.reference)
        print(f"wrote the float64 reference of {len(tokens)} decode steps to {args.reference}")


def gpt2_sized_params(vocab, d, layers, ctx, seed=124):
    """Seeded random weights of GPT-2 small's shapes (float32); bench/decode_bench.py makes the
    same ones for its PyTorch model."""
    return model.init_params(np.random.default_rng(seed), vocab, d, layers, ctx, 4 * d)


if __name__ == "__main__":
    main()

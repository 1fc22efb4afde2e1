"""int8 test cases for bench/make_ort_cases.py (issue 22, item 5): quantized ONNX models whose graph
outputs are the 8-bit (or, for ConvInteger / MatMulInteger, the int32) tensors, so that vkc can be
compared with ONNX Runtime exactly, and an independent numpy implementation of what ORT's CPU
kernels compute (MLAS's requantization), used where ORT is not installed (--numpy-expected) and,
where it is, printed next to ORT's outputs to show whether ORT follows the formula:

    acc    = exact integer sum of (x_q - x_zp) * (w_q - w_zp) (+ bias_i32)
    M[c]   = f32(f32(x_scale * w_scale[c]) / y_scale)
    y_q    = saturate(round_half_even(f32(f32(acc) * M[c])) + y_zp)
    x_q    = saturate(round_half_even(f32(x) / x_scale) + x_zp)        (QuantizeLinear of an f32 input)

ORT runs the QDQ form as QLinearConv / QLinearMatMul (MLAS's integer kernels) only where the
activations and the output have the same type and, on x86, are u8 (its QDQ selectors; s8 QDQ
fusion is ARM-only); otherwise it runs DQ -> float op -> Q. With dyadic scales and small operands
every float value of that path is exact (products and sums of few-bit dyadic numbers, a division
by a power of two), so it gives the formula's outputs too; with calibrated scales it need not,
so the calibrated QDQ cases are u8 -> u8.

Each case is (model, inputs, expected) with expected(inputs) -> (outputs, ties): the outputs by the
formula and how many products f32(acc) * M fell exactly half way between two integers (so that the
rounding mode matters). Scales are of two kinds: dyadic (powers of two times small odd integers,
with small operand ranges: the products have few fraction bits and many land on ties; the input
quantize's division is then exact too, also on a GPU whose division is not correctly rounded), and
"calibrated" ones as ORT's quantizer would compute them (M inexact; the f32 inputs lie away from
the input quantize's rounding boundaries, so a GPU's approximate division cannot move them).
"""
import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32
ONNX_OF = {np.uint8: TensorProto.UINT8, np.int8: TensorProto.INT8, np.int32: TensorProto.INT32,
           np.float32: TensorProto.FLOAT}
RANGE = {np.uint8: (0, 255), np.int8: (-128, 127)}
OPSET = 13  # per-axis DequantizeLinear; what ORT's quantizer writes


# --- the formula ---------------------------------------------------------------------------------

def quantize(x, scale, zp, dtype):
    lo, hi = RANGE[dtype]
    q = np.rint(x.astype(F32) / F32(scale)).astype(np.float64) + zp
    return np.clip(q, lo, hi).astype(dtype)


def multiplier(x_scale, w_scale, y_scale):
    xw = (F32(x_scale) * np.asarray(w_scale, dtype=F32)).astype(F32)
    return (xw / F32(y_scale)).astype(F32)


def requantize(acc, m, zp, dtype, axis):
    """acc: int64 sums; m: f32 per tensor (scalar) or per channel along `axis`."""
    m = np.asarray(m, dtype=F32)
    if m.ndim == 1:
        shape = [1] * acc.ndim
        shape[axis] = m.size
        m = m.reshape(shape)
    v = (acc.astype(F32) * m).astype(F32)
    lo, hi = RANGE[dtype]
    ties = int(((v - np.floor(v)) == 0.5).sum())  # products half way between two integers
    return np.clip(np.rint(v).astype(np.float64) + zp, lo, hi).astype(dtype), ties


def conv_int(x, w, x_zp, w_zp, bias, strides, pads, dilations, groups):
    """Exact 2-D integer conv (int64), padding counting as the zero point (0 once centered)."""
    n, c, h, wd = x.shape
    f, cg, kh, kw = w.shape
    xc = x.astype(np.int64) - int(x_zp)
    wc = w.astype(np.int64) - np.broadcast_to(np.asarray(w_zp, dtype=np.int64).reshape(-1, 1, 1, 1), (f, 1, 1, 1))
    xc = np.pad(xc, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    sy, sx = strides
    dy, dx = dilations
    oh = (h + pads[0] + pads[2] - dy * (kh - 1) - 1) // sy + 1
    ow = (wd + pads[1] + pads[3] - dx * (kw - 1) - 1) // sx + 1
    out = np.zeros((n, f, oh, ow), dtype=np.int64)
    fg = f // groups
    for g in range(groups):
        for ky in range(kh):
            for kx in range(kw):
                patch = xc[:, g * cg:(g + 1) * cg, ky * dy:ky * dy + sy * (oh - 1) + 1:sy,
                           kx * dx:kx * dx + sx * (ow - 1) + 1:sx]
                out[:, g * fg:(g + 1) * fg] += np.einsum("nchw,fc->nfhw", patch, wc[g * fg:(g + 1) * fg, :, ky, kx])
    if bias is not None:
        out += bias.astype(np.int64).reshape(1, f, 1, 1)
    return out


def matmul_int(a, b, a_zp, b_zp):
    return np.matmul(a.astype(np.int64) - int(a_zp), b.astype(np.int64) - np.asarray(b_zp, dtype=np.int64))


# --- model pieces --------------------------------------------------------------------------------

def const(name, value):
    return numpy_helper.from_array(np.asarray(value), name)


def scalar(name, value, dtype):
    return const(name, np.array(value, dtype=dtype))


def model_of(nodes, inputs, outputs, inits):
    g = helper.make_graph(nodes, "g", inputs, outputs, inits)
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", OPSET)], ir_version=8)


def vi(name, dtype, shape):
    return helper.make_tensor_value_info(name, ONNX_OF[dtype], list(shape))


def dyadic_scales(rng, n, exp):
    """n scales k * 2^exp with k small odd integers (1..7): exact products, few fraction bits."""
    return (rng.choice(np.arange(1, 8, 2), n) * 2.0 ** exp).astype(F32)


def pow2_near(v):
    return F32(2.0 ** np.round(np.log2(v)))


def quantized_values(rng, shape, dtype, zp, span):
    """Quantized activations: the whole range of dtype, or (span) within span of the zero point."""
    lo, hi = RANGE[dtype]
    if span is None:
        return rng.integers(lo, hi + 1, shape).astype(dtype)
    return np.clip(rng.integers(zp - span, zp + span + 1, shape), lo, hi).astype(dtype)


def output_scale(acc, in_scale, w_scale, target_std, dyadic, nudge):
    """y_scale for outputs of about target_std quantization steps (some saturate): a power of two
    (dyadic cases) or the guess nudged off round values (calibrated ones)."""
    guess = float(np.std(acc)) * float(in_scale) * float(np.mean(w_scale)) / target_std
    return pow2_near(guess) if dyadic else F32(guess * nudge)


def quant_inits(w_name, w, w_scale, per_channel, in_name, in_scale, in_zp, in_dtype, y_scale, y_zp, y_dtype):
    """The initializers of a quantized product: its int8 weights with their scales (per output
    channel / column, or one) and zero points 0, the input's and the output's scale and zero point."""
    inits = [const(w_name, w), scalar(f"{in_name}_scale", in_scale, F32), scalar(f"{in_name}_zp", in_zp, in_dtype),
             scalar("y_scale", y_scale, F32), scalar("y_zp", y_zp, y_dtype)]
    if per_channel:
        return inits + [const(f"{w_name}_scale", w_scale), const(f"{w_name}_zp", np.zeros(len(w_scale), np.int8))]
    return inits + [scalar(f"{w_name}_scale", w_scale[0], F32), scalar(f"{w_name}_zp", 0, np.int8)]


def float_input(rng, shape, scale, zp, dtype, dyadic):
    """f32 values whose quantization covers the 8-bit range (and beyond it: saturation). Dyadic
    scale: multiples of scale/2, so the input quantize meets exact ties too; else values at least
    0.2 steps away from a rounding boundary."""
    lo, hi = RANGE[dtype]
    if dyadic:
        k = rng.integers(2 * (lo - zp) - 6, 2 * (hi - zp) + 7, shape)
        return (k.astype(np.float64) * (float(scale) / 2)).astype(F32)
    q = rng.integers(lo - zp - 3, hi - zp + 4, shape).astype(np.float64) + rng.uniform(-0.3, 0.3, shape)
    return (q * float(scale)).astype(F32)


# --- QDQ conv ------------------------------------------------------------------------------------

def qdq_conv(seed, x_shape, f, k, x_dtype=np.uint8, x_zp=131, y_dtype=np.uint8, y_zp=119,
             per_channel=True, bias=True, strides=(1, 1), pads=(1, 1, 1, 1), groups=1, dilations=(1, 1),
             float_in=True, dyadic=True, x_span=None, w_span=None, target_std=30.0):
    """QuantizeLinear(x) -> DequantizeLinear -> Conv(., DQ(w_i8), DQ(b_i32)) -> QuantizeLinear, as
    ORT's quantizer writes it (weights s8 with zero point 0, per tensor or per output channel;
    bias i32 with scale x_scale * w_scale, zero point 0). x_span / w_span: the centered operands'
    range (dyadic cases keep them small so that sums are small and ties frequent)."""
    rng = np.random.default_rng(seed)
    c = x_shape[1]
    cg = c // groups
    x_scale = F32(2.0 ** -5) if dyadic else F32(0.0173)
    # Activations: the quantized values, then (float input) floats that quantize to them.
    xq = quantized_values(rng, x_shape, x_dtype, x_zp, x_span)
    if float_in:
        if x_span is None:
            x = float_input(rng, x_shape, x_scale, x_zp, x_dtype, dyadic)
        else:  # values around the zero point, with ties (dyadic) or away from boundaries
            off = rng.integers(-1, 2, x_shape) * 0.5 if dyadic else rng.uniform(-0.3, 0.3, x_shape)
            x = ((xq.astype(np.float64) - x_zp + off) * float(x_scale)).astype(F32)
        xq = quantize(x, x_scale, x_zp, x_dtype)
    ws = w_span or 127
    w = rng.integers(-ws, ws + 1, (f, cg) + tuple(k)).astype(np.int8)
    nscale = f if per_channel else 1
    if dyadic:
        w_scale = dyadic_scales(rng, nscale, -7)
    else:  # as ORT's quantizer: max |w| / 127 per channel, of float weights
        w_scale = (rng.uniform(0.002, 0.02, nscale)).astype(F32)
    b = None
    if bias:  # of the size of the sums, so that it shifts them without drowning them
        r = max(50, int(2 * np.std(conv_int(xq, w, x_zp, 0, None, strides, pads, dilations, groups))))
        b = rng.integers(-r, r + 1, f).astype(np.int32)
    acc = conv_int(xq, w, x_zp, 0, b, strides, pads, dilations, groups)
    y_scale = output_scale(acc, x_scale, w_scale, target_std, dyadic, 1.0123)
    inits = quant_inits("w", w, w_scale, per_channel, "x", x_scale, x_zp, x_dtype, y_scale, y_zp, y_dtype)
    axis = {"axis": 0} if per_channel else {}
    nodes = []
    if float_in:
        nodes.append(helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["x_q"]))
    nodes += [helper.make_node("DequantizeLinear", ["x_q" if float_in else "x", "x_scale", "x_zp"], ["x_f"]),
              helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["w_f"], **axis)]
    conv_in = ["x_f", "w_f"]
    if bias:
        b_scale = (F32(x_scale) * w_scale).astype(F32)
        inits += [const("b", b)]
        if per_channel:
            inits += [const("b_scale", b_scale), const("b_zp", np.zeros(f, np.int32))]
        else:
            inits += [scalar("b_scale", b_scale[0], F32), scalar("b_zp", 0, np.int32)]
        nodes.append(helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zp"], ["b_f"], **axis))
        conv_in.append("b_f")
    nodes += [helper.make_node("Conv", conv_in, ["y_f"], kernel_shape=list(k), strides=list(strides),
                               pads=list(pads), group=groups, dilations=list(dilations)),
              helper.make_node("QuantizeLinear", ["y_f", "y_scale", "y_zp"], ["y"])]
    out_shape = acc.shape
    in_vi = vi("x", np.float32, x_shape) if float_in else vi("x", x_dtype, x_shape)
    model = model_of(nodes, [in_vi], [vi("y", y_dtype, out_shape)], inits)
    m = multiplier(x_scale, w_scale if per_channel else w_scale[0], y_scale)

    def expected(ins):
        xq_ = quantize(ins[0], x_scale, x_zp, x_dtype) if float_in else ins[0]
        y, ties = requantize(conv_int(xq_, w, x_zp, 0, b, strides, pads, dilations, groups), m, y_zp, y_dtype, 1)
        return [y], ties
    return model, [x if float_in else xq], expected


# --- QDQ matmul ----------------------------------------------------------------------------------

def qdq_matmul(seed, a_shape, n, a_dtype=np.uint8, a_zp=125, y_dtype=np.uint8, y_zp=131, per_column=False,
               float_in=True, dyadic=True, a_span=None, b_span=None, target_std=30.0):
    """QuantizeLinear(a) -> DQ -> MatMul(., DQ(b_i8 [K, N], per tensor or per column)) -> QuantizeLinear."""
    rng = np.random.default_rng(seed)
    kdim = a_shape[-1]
    a_scale = F32(2.0 ** -6) if dyadic else F32(0.0291)
    aq = quantized_values(rng, a_shape, a_dtype, a_zp, a_span)
    if float_in:  # as in qdq_conv
        if a_span is None:
            a = float_input(rng, a_shape, a_scale, a_zp, a_dtype, dyadic)
        else:
            off = rng.integers(-1, 2, a_shape) * 0.5 if dyadic else rng.uniform(-0.3, 0.3, a_shape)
            a = ((aq.astype(np.float64) - a_zp + off) * float(a_scale)).astype(F32)
        aq = quantize(a, a_scale, a_zp, a_dtype)
    bs = b_span or 127
    b = rng.integers(-bs, bs + 1, (kdim, n)).astype(np.int8)
    ns = n if per_column else 1
    b_scale = dyadic_scales(rng, ns, -6) if dyadic else rng.uniform(0.003, 0.03, ns).astype(F32)
    acc = matmul_int(aq, b, a_zp, 0)
    y_scale = output_scale(acc, a_scale, b_scale, target_std, dyadic, 0.9871)
    inits = quant_inits("b", b, b_scale, per_column, "a", a_scale, a_zp, a_dtype, y_scale, y_zp, y_dtype)
    nodes = []
    if float_in:
        nodes.append(helper.make_node("QuantizeLinear", ["a", "a_scale", "a_zp"], ["a_q"]))
    nodes += [helper.make_node("DequantizeLinear", ["a_q" if float_in else "a", "a_scale", "a_zp"], ["a_f"]),
              helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zp"], ["b_f"],
                               **({"axis": 1} if per_column else {})),
              helper.make_node("MatMul", ["a_f", "b_f"], ["y_f"]),
              helper.make_node("QuantizeLinear", ["y_f", "y_scale", "y_zp"], ["y"])]
    in_vi = vi("a", np.float32, a_shape) if float_in else vi("a", a_dtype, a_shape)
    model = model_of(nodes, [in_vi], [vi("y", y_dtype, acc.shape)], inits)
    m = multiplier(a_scale, b_scale if per_column else b_scale[0], y_scale)

    def expected(ins):
        aq_ = quantize(ins[0], a_scale, a_zp, a_dtype) if float_in else ins[0]
        y, ties = requantize(matmul_int(aq_, b, a_zp, 0), m, y_zp, y_dtype, -1)
        return [y], ties
    return model, [a if float_in else aq], expected


def edge_scales(rng, x_scale, y_scale, accs, n):
    """n per-column weight scales, about y_scale / x_scale, at which computing the requantization
    another way changes an output for one of the sums `accs`: half of them where M rounded once,
    f32(x_scale * w_scale / y_scale) exactly, differs from ORT's f32(f32(x_scale * w_scale) /
    y_scale) in an output; half where rounding the exact product acc * M instead of f32(acc * M)
    does. The search is seeded, so the scales are the same on every run."""
    a64, a32 = np.asarray(accs, np.float64), np.asarray(accs, F32)
    found = {"m": [], "product": []}
    while min(len(v) for v in found.values()) < n // 2:
        w = (rng.uniform(0.5, 1.5, 20000) * float(y_scale) / float(x_scale)).astype(F32)
        m = multiplier(x_scale, w, y_scale)
        m_once = (np.float64(x_scale) * w.astype(np.float64) / np.float64(y_scale)).astype(F32)
        ours = np.rint((a32[None, :] * m[:, None]).astype(F32))
        once = np.rint((a32[None, :] * m_once[:, None]).astype(F32))
        exact = np.rint(a64[None, :] * m.astype(np.float64)[:, None])
        found["m"] += list(w[(ours != once).any(1)])
        found["product"] += list(w[(ours != exact).any(1)])
    return np.array(found["m"][:n // 2] + found["product"][:n - n // 2], dtype=F32)


def qdq_matmul_rounding_edges(seed, n=16):
    """A QDQ matmul whose sums are exactly -128..127 (u8 lhs column 0 = 0..255, zero point 128, rhs
    row 0 = 1, the others 0; K 16, N 16: NVIDIA's tensor cores) and whose per-column scales sit
    where only ORT's exact sequence of f32 roundings gives ORT's outputs (edge_scales)."""
    rng = np.random.default_rng(seed)
    a_scale, y_scale, a_zp, y_zp = F32(0.0173), F32(0.0291), 128, 128
    a = rng.integers(0, 256, (256, 16)).astype(np.uint8)
    a[:, 0] = np.arange(256)
    b = np.zeros((16, n), np.int8)
    b[0] = 1
    b_scale = edge_scales(rng, a_scale, y_scale, np.arange(-128, 128), n)
    inits = [const("b", b), scalar("a_scale", a_scale, F32), scalar("a_zp", a_zp, np.uint8),
             const("b_scale", b_scale), const("b_zp", np.zeros(n, np.int8)),
             scalar("y_scale", y_scale, F32), scalar("y_zp", y_zp, np.uint8)]
    nodes = [helper.make_node("DequantizeLinear", ["a", "a_scale", "a_zp"], ["a_f"]),
             helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zp"], ["b_f"], axis=1),
             helper.make_node("MatMul", ["a_f", "b_f"], ["y_f"]),
             helper.make_node("QuantizeLinear", ["y_f", "y_scale", "y_zp"], ["y"])]
    model = model_of(nodes, [vi("a", np.uint8, a.shape)], [vi("y", np.uint8, (256, n))], inits)
    m = multiplier(a_scale, b_scale, y_scale)

    def expected(ins):
        y, ties = requantize(matmul_int(ins[0], b, a_zp, 0), m, y_zp, np.uint8, -1)
        return [y], ties
    return model, [a], expected


# --- QLinearConv / QLinearMatMul (constant scales), ConvInteger / MatMulInteger ------------------

def qlinear_conv(seed, x_shape, f, k, x_dtype=np.uint8, x_zp=137, y_dtype=np.uint8, y_zp=121,
                 per_channel=True, bias=True, strides=(1, 1), pads=(1, 1, 1, 1), groups=1, dyadic=True,
                 x_span=24, w_span=6):
    rng = np.random.default_rng(seed)
    cg = x_shape[1] // groups
    lo, hi = RANGE[x_dtype]
    xq = np.clip(rng.integers(x_zp - x_span, x_zp + x_span + 1, x_shape), lo, hi).astype(x_dtype)
    w = rng.integers(-w_span, w_span + 1, (f, cg) + tuple(k)).astype(np.int8)
    x_scale = F32(2.0 ** -4) if dyadic else F32(0.0213)
    ns = f if per_channel else 1
    w_scale = dyadic_scales(rng, ns, -5) if dyadic else rng.uniform(0.01, 0.05, ns).astype(F32)
    b = rng.integers(-200, 201, f).astype(np.int32) if bias else None
    acc = conv_int(xq, w, x_zp, 0, b, strides, pads, (1, 1), groups)
    y_guess = float(np.std(acc)) * float(x_scale) * float(np.mean(w_scale)) / 30.0
    y_scale = pow2_near(y_guess) if dyadic else F32(y_guess * 1.031)
    ws = const("w_scale", w_scale) if per_channel else scalar("w_scale", w_scale[0], F32)
    wz = const("w_zp", np.zeros(f, np.int8)) if per_channel else scalar("w_zp", 0, np.int8)
    inits = [scalar("x_scale", x_scale, F32), scalar("x_zp", x_zp, x_dtype), const("w", w), ws, wz,
             scalar("y_scale", y_scale, F32), scalar("y_zp", y_zp, y_dtype)]
    ins = ["x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp"]
    if bias:
        inits.append(const("b", b))
        ins.append("b")
    node = helper.make_node("QLinearConv", ins, ["y"], kernel_shape=list(k), strides=list(strides),
                            pads=list(pads), group=groups)
    model = model_of([node], [vi("x", x_dtype, x_shape)], [vi("y", y_dtype, acc.shape)], inits)
    m = multiplier(x_scale, w_scale if per_channel else w_scale[0], y_scale)

    def expected(i):
        y, ties = requantize(conv_int(i[0], w, x_zp, 0, b, strides, pads, (1, 1), groups), m, y_zp, y_dtype, 1)
        return [y], ties
    return model, [xq], expected


def qlinear_matmul(seed, a_shape, n, a_dtype=np.uint8, a_zp=118, b_dtype=np.int8, b_zp=0, y_dtype=np.uint8,
                   y_zp=128, per_column=False, a_span=40, b_span=20):
    rng = np.random.default_rng(seed)
    kdim = a_shape[-1]
    lo, hi = RANGE[a_dtype]
    aq = np.clip(rng.integers(a_zp - a_span, a_zp + a_span + 1, a_shape), lo, hi).astype(a_dtype)
    blo, bhi = RANGE[b_dtype]
    b = np.clip(rng.integers(b_zp - b_span, b_zp + b_span + 1, (kdim, n)), blo, bhi).astype(b_dtype)
    a_scale = F32(2.0 ** -5)
    ns = n if per_column else 1
    b_scale = dyadic_scales(rng, ns, -6)
    acc = matmul_int(aq, b, a_zp, b_zp)
    y_scale = pow2_near(float(np.std(acc)) * float(a_scale) * float(np.mean(b_scale)) / 30.0)
    bsc = const("b_scale", b_scale) if per_column else scalar("b_scale", b_scale[0], F32)
    inits = [scalar("a_scale", a_scale, F32), scalar("a_zp", a_zp, a_dtype), const("b", b), bsc,
             scalar("b_zp", b_zp, b_dtype), scalar("y_scale", y_scale, F32), scalar("y_zp", y_zp, y_dtype)]
    node = helper.make_node("QLinearMatMul", ["a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"], ["y"])
    model = model_of([node], [vi("a", a_dtype, a_shape)], [vi("y", y_dtype, acc.shape)], inits)
    m = multiplier(a_scale, b_scale if per_column else b_scale[0], y_scale)

    def expected(i):
        y, ties = requantize(matmul_int(i[0], b, a_zp, b_zp), m, y_zp, y_dtype, -1)
        return [y], ties
    return model, [aq], expected


def conv_integer(seed, x_shape, f, k, w_dtype=np.uint8, x_zp=131, w_zp=7, pads=(1, 0, 1, 2), strides=(1, 1), groups=1):
    """ConvInteger: u8 input (a graph input), constant filter and zero points (per tensor: ORT's
    kernel takes no other); the i32 sums exactly."""
    rng = np.random.default_rng(seed)
    cg = x_shape[1] // groups
    xq = rng.integers(0, 256, x_shape).astype(np.uint8)
    lo, hi = RANGE[w_dtype]
    w = rng.integers(lo, hi + 1, (f, cg) + tuple(k)).astype(w_dtype)
    inits = [scalar("x_zp", x_zp, np.uint8), const("w", w), scalar("w_zp", w_zp, w_dtype)]
    acc = conv_int(xq, w, x_zp, w_zp, None, strides, pads, (1, 1), groups)
    node = helper.make_node("ConvInteger", ["x", "w", "x_zp", "w_zp"], ["y"], kernel_shape=list(k),
                            pads=list(pads), strides=list(strides), group=groups)
    model = model_of([node], [vi("x", np.uint8, x_shape)], [vi("y", np.int32, acc.shape)], inits)

    def expected(i):
        return [conv_int(i[0], w, x_zp, w_zp, None, strides, pads, (1, 1), groups).astype(np.int32)], 0
    return model, [xq], expected


def matmul_integer(seed, a_shape, n, b_dtype=np.int8, a_zp=120, b_zp=None):
    """MatMulInteger: u8 lhs (a graph input), constant rhs with per-column zero points."""
    rng = np.random.default_rng(seed)
    kdim = a_shape[-1]
    aq = rng.integers(0, 256, a_shape).astype(np.uint8)
    lo, hi = RANGE[b_dtype]
    b = rng.integers(lo, hi + 1, (kdim, n)).astype(b_dtype)
    bz = rng.integers(-5, 6, n).astype(b_dtype) if b_zp is None else np.array(b_zp, dtype=b_dtype)
    inits = [scalar("a_zp", a_zp, np.uint8), const("b", b), const("b_zp", bz)]
    acc = matmul_int(aq, b, a_zp, bz)
    node = helper.make_node("MatMulInteger", ["a", "b", "a_zp", "b_zp"], ["y"])
    model = model_of([node], [vi("a", np.uint8, a_shape)], [vi("y", np.int32, acc.shape)], inits)

    def expected(i):
        return [matmul_int(i[0], b, a_zp, bz).astype(np.int32)], 0
    return model, [aq], expected


def cases():
    """name -> () -> (model, inputs, expected). Names start with ort_int8_."""
    u8, s8 = np.uint8, np.int8
    return {
        # QDQ conv, f32 input quantized in the graph (u8, zero point 131: padding reads it), 3x3,
        # pad 1, per-channel weights, bias, dyadic scales with small operands: many ties.
        "qdq_conv_u8_pad_perchannel": lambda: qdq_conv(1, (1, 8, 9, 9), 12, (3, 3), x_span=20, w_span=5),
        # u8 graph input directly, per-tensor weights, stride 2, asymmetric pads.
        "qdq_conv_u8in_pertensor_stride2": lambda: qdq_conv(2, (2, 6, 11, 10), 8, (3, 3), per_channel=False,
                                                            strides=(2, 2), pads=(1, 0, 2, 1), float_in=False,
                                                            x_span=30, w_span=6),
        # s8 activations (zero point -3) and s8 output (zero point 5).
        "qdq_conv_s8_perchannel": lambda: qdq_conv(3, (1, 8, 8, 8), 8, (3, 3), x_dtype=s8, x_zp=-3, y_dtype=s8,
                                                   y_zp=5, x_span=25, w_span=5),
        # groups 2 (4 channels per group), dilation 2.
        "qdq_conv_groups2": lambda: qdq_conv(4, (1, 8, 9, 9), 6, (3, 3), groups=2, dilations=(2, 2), pads=(2, 2, 2, 2),
                                             x_span=30, w_span=7),
        # depthwise (16 groups of 1), u8 graph input, no bias.
        "qdq_conv_depthwise_nobias": lambda: qdq_conv(5, (1, 16, 10, 10), 16, (3, 3), groups=16, bias=False,
                                                      float_in=False, x_span=40, w_span=20, target_std=30.0),
        # 1x1, no bias, no padding, calibrated (non-dyadic) scales, full-range operands.
        "qdq_conv_1x1_nobias_calibrated": lambda: qdq_conv(6, (2, 16, 6, 7), 24, (1, 1), bias=False, pads=(0, 0, 0, 0),
                                                           dyadic=False, x_zp=97),
        # int8 tensor cores on NVIDIA (64 channels, 3x3, z' = zp - 128 = -7 != 0: padding reads z'):
        # dyadic, small operands (ties), f32 input.
        "qdq_conv_tc_64ch_3x3": lambda: qdq_conv(7, (1, 64, 10, 10), 64, (3, 3), x_span=12, w_span=3),
        # the same kernel with calibrated scales, full-range u8 input, 96 output channels.
        "qdq_conv_tc_96f_calibrated": lambda: qdq_conv(8, (1, 64, 9, 9), 96, (3, 3), float_in=False, dyadic=False,
                                                       x_zp=121, y_zp=140),
        # QDQ matmul: 2-D f32 input, per-tensor weights.
        "qdq_matmul_2d_pertensor": lambda: qdq_matmul(9, (24, 40), 20, a_span=30, b_span=9),
        # batched 3-D lhs (u8 graph input), per-column weights, s8 output (ORT: float path, exact
        # here since the scales are dyadic).
        "qdq_matmul_3d_percolumn": lambda: qdq_matmul(10, (3, 10, 48), 16, per_column=True, float_in=False,
                                                      y_dtype=s8, y_zp=-2, a_span=30, b_span=9),
        # tensor cores on NVIDIA: M 128 (2 x 64), K 256, N 64, per-column, calibrated, u8 input.
        "qdq_matmul_tc_k256_percolumn": lambda: qdq_matmul(11, (2, 64, 256), 64, per_column=True, dyadic=False,
                                                           float_in=False),
        # s8 lhs (per tensor), dyadic, f32 input.
        "qdq_matmul_s8": lambda: qdq_matmul(12, (17, 33), 12, a_dtype=s8, a_zp=4, y_dtype=s8, y_zp=-7,
                                            a_span=30, b_span=9),
        # per-column scales where M rounded once, or the product rounded exactly, changes outputs.
        "qdq_matmul_rounding_edges": lambda: qdq_matmul_rounding_edges(22),
        "qlinearconv_u8_perchannel_bias": lambda: qlinear_conv(13, (1, 8, 9, 9), 10, (3, 3)),
        "qlinearconv_s8_groups_stride2": lambda: qlinear_conv(14, (1, 8, 10, 10), 8, (3, 3), x_dtype=s8, x_zp=-5,
                                                              y_dtype=s8, y_zp=3, groups=2, strides=(2, 2),
                                                              per_channel=False),
        "qlinearconv_calibrated_nobias": lambda: qlinear_conv(15, (1, 16, 7, 7), 16, (3, 3), bias=False, dyadic=False,
                                                              x_span=100, w_span=100),
        "qlinearmatmul_3d_u8s8": lambda: qlinear_matmul(16, (2, 12, 32), 20),
        "qlinearmatmul_2d_u8u8_percolumn": lambda: qlinear_matmul(17, (16, 24), 12, b_dtype=u8, b_zp=130,
                                                                  per_column=True),
        "convinteger_u8u8": lambda: conv_integer(18, (1, 6, 8, 9), 8, (3, 3)),
        # ORT's ConvInteger takes u8 filters only (its kernel's type constraints).
        "convinteger_u8u8_groups_stride": lambda: conv_integer(19, (1, 8, 7, 7), 8, (3, 3), w_zp=131, groups=2,
                                                               strides=(2, 1)),
        "matmulinteger_3d_u8s8": lambda: matmul_integer(20, (2, 9, 40), 24),
        "matmulinteger_2d_u8u8": lambda: matmul_integer(21, (13, 30), 17, b_dtype=u8, b_zp=127),
    }


def seed_conv(path, seed=0):
    """The seed QDQ conv for bench/compare_onnxruntime.py: f32 input 1x64x512x512 in [-1, 1)
    quantized to u8 (scale 1/128, zero point 128, exact division), s8 per-channel weights (full
    range), i32 bias, 256 output channels, 3x3, pad 1, u8 output."""
    rng = np.random.default_rng(seed)
    f, c = 256, 64
    x_scale, x_zp = F32(1 / 128), 128
    w = rng.integers(-127, 128, (f, c, 3, 3)).astype(np.int8)
    w_scale = rng.uniform(0.001, 0.004, f).astype(F32)
    b = rng.integers(-20000, 20001, f).astype(np.int32)
    # |acc| std about sqrt(576) * 74 * 73: outputs of about 40 steps around zero point 128.
    y_scale = F32(np.sqrt(576) * 74 * 73 * float(x_scale) * float(np.mean(w_scale)) / 40)
    inits = [const("w", w), scalar("x_scale", x_scale, F32), scalar("x_zp", x_zp, np.uint8),
             const("w_scale", w_scale), const("w_zp", np.zeros(f, np.int8)), const("b", b),
             const("b_scale", (x_scale * w_scale).astype(F32)), const("b_zp", np.zeros(f, np.int32)),
             scalar("y_scale", y_scale, F32), scalar("y_zp", 128, np.uint8)]
    nodes = [helper.make_node("QuantizeLinear", ["x", "x_scale", "x_zp"], ["x_q"]),
             helper.make_node("DequantizeLinear", ["x_q", "x_scale", "x_zp"], ["x_f"]),
             helper.make_node("DequantizeLinear", ["w", "w_scale", "w_zp"], ["w_f"], axis=0),
             helper.make_node("DequantizeLinear", ["b", "b_scale", "b_zp"], ["b_f"], axis=0),
             helper.make_node("Conv", ["x_f", "w_f", "b_f"], ["y_f"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("QuantizeLinear", ["y_f", "y_scale", "y_zp"], ["y"])]
    model = model_of(nodes, [vi("x", np.float32, (1, c, 512, 512))], [vi("y", np.uint8, (1, f, 512, 512))], inits)
    import onnx
    onnx.save(model, path)

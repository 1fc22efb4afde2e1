"""The character-level language model of the charlm sample: a small GPT-2-style decoder.

Shared by train.py (numpy training, manual backprop) and export_onnx.py (the ONNX decode-step
graph and its float64 reference). Pre-LayerNorm blocks, learned position embeddings, GELU (tanh
form, as GPT-2), output projection tied to the token embedding:

    x = wte[tokens] + wpe[positions]
    per layer:  x += Wo . attention(LN1(x) . Wqkv) + bo      (causal, H heads)
                x += W2 . gelu(W1 . LN2(x) + b1) + b2
    logits = LNf(x) . wte^T
"""
import numpy as np

EPS = 1e-5
GELU_C = np.sqrt(2.0 / np.pi)


def param_shapes(vocab, d, layers, ctx, ff):
    shapes = {"wte": (vocab, d), "wpe": (ctx, d), "lnf_g": (d,), "lnf_b": (d,)}
    for l in range(layers):
        p = f"h{l}."
        shapes.update({p + "ln1_g": (d,), p + "ln1_b": (d,), p + "wqkv": (d, 3 * d), p + "bqkv": (3 * d,),
                       p + "wo": (d, d), p + "bo": (d,), p + "ln2_g": (d,), p + "ln2_b": (d,),
                       p + "w1": (d, ff), p + "b1": (ff,), p + "w2": (ff, d), p + "b2": (d,)})
    return shapes


def init_params(rng, vocab, d, layers, ctx, ff, dtype=np.float32):
    params = {}
    for name, shape in param_shapes(vocab, d, layers, ctx, ff).items():
        if name.endswith("_g"):
            params[name] = np.ones(shape)
        elif len(shape) == 1:
            params[name] = np.zeros(shape)
        else:
            std = 0.02 if name in ("wte", "wpe") else 1.0 / np.sqrt(shape[0])
            if name.endswith("wo") or name.endswith("w2"):
                std /= np.sqrt(2 * layers)  # GPT-2's scaled residual projections
            params[name] = rng.normal(0, std, shape)
        params[name] = params[name].astype(dtype)
    return params


def layer_count(params):
    return sum(1 for k in params if k.endswith(".wqkv"))


def layernorm(x, g, b):
    mu = x.mean(-1, keepdims=True)
    xc = x - mu
    rstd = 1.0 / np.sqrt((xc * xc).mean(-1, keepdims=True) + EPS)
    xhat = xc * rstd
    return xhat * g + b, (xhat, rstd)


def layernorm_back(dy, g, cache):
    xhat, rstd = cache
    dxhat = dy * g
    dx = rstd * (dxhat - dxhat.mean(-1, keepdims=True) - xhat * (dxhat * xhat).mean(-1, keepdims=True))
    axes = tuple(range(dy.ndim - 1))
    return dx, (dy * xhat).sum(axes), dy.sum(axes)


def gelu(x):
    t = np.tanh(GELU_C * (x + 0.044715 * x * x * x))
    return 0.5 * x * (1 + t), t


def gelu_back(dy, x, t):
    dt = (1 - t * t) * GELU_C * (1 + 3 * 0.044715 * x * x)
    return dy * (0.5 * (1 + t) + 0.5 * x * dt)


def forward(params, tokens, heads, train=False):
    """tokens int [B,T] -> logits [B,T,V] (and the backward cache when train)."""
    B, T = tokens.shape
    d = params["wte"].shape[1]
    dh = d // heads
    x = params["wte"][tokens] + params["wpe"][:T]
    mask = np.triu(np.full((T, T), -1e9, dtype=x.dtype), 1)
    caches = []
    for l in range(layer_count(params)):
        p = f"h{l}."
        a, ln1 = layernorm(x, params[p + "ln1_g"], params[p + "ln1_b"])
        qkv = a @ params[p + "wqkv"] + params[p + "bqkv"]
        q, k, v = (qkv[..., i * d:(i + 1) * d].reshape(B, T, heads, dh).transpose(0, 2, 1, 3) for i in range(3))
        s = q @ k.transpose(0, 1, 3, 2) / np.sqrt(dh) + mask
        s = np.exp(s - s.max(-1, keepdims=True))
        att = s / s.sum(-1, keepdims=True)
        o = (att @ v).transpose(0, 2, 1, 3).reshape(B, T, d)
        x = x + o @ params[p + "wo"] + params[p + "bo"]
        m, ln2 = layernorm(x, params[p + "ln2_g"], params[p + "ln2_b"])
        hpre = m @ params[p + "w1"] + params[p + "b1"]
        hact, t = gelu(hpre)
        x = x + hact @ params[p + "w2"] + params[p + "b2"]
        caches.append((a, ln1, q, k, v, att, o, m, ln2, hpre, t, hact))
    xf, lnf = layernorm(x, params["lnf_g"], params["lnf_b"])
    logits = xf @ params["wte"].T
    return (logits, (tokens, caches, xf, lnf)) if train else logits


def backward(params, heads, cache, dlogits):
    tokens, caches, xf, lnf = cache
    B, T = tokens.shape
    d = params["wte"].shape[1]
    dh = d // heads
    g = {k: np.zeros_like(v) for k, v in params.items()}
    g["wte"] += dlogits.reshape(-1, dlogits.shape[-1]).T @ xf.reshape(-1, d)
    dx, g["lnf_g"], g["lnf_b"] = layernorm_back(dlogits @ params["wte"], params["lnf_g"], lnf)
    for l in reversed(range(layer_count(params))):
        p = f"h{l}."
        a, ln1, q, k, v, att, o, m, ln2, hpre, t, hact = caches[l]
        g[p + "w2"] = hact.reshape(-1, hact.shape[-1]).T @ dx.reshape(-1, d)
        g[p + "b2"] = dx.sum((0, 1))
        dh_pre = gelu_back(dx @ params[p + "w2"].T, hpre, t)
        g[p + "w1"] = m.reshape(-1, d).T @ dh_pre.reshape(-1, dh_pre.shape[-1])
        g[p + "b1"] = dh_pre.sum((0, 1))
        dm = dh_pre @ params[p + "w1"].T
        dx2, g[p + "ln2_g"], g[p + "ln2_b"] = layernorm_back(dm, params[p + "ln2_g"], ln2)
        dx = dx + dx2
        g[p + "wo"] = o.reshape(-1, d).T @ dx.reshape(-1, d)
        g[p + "bo"] = dx.sum((0, 1))
        do = (dx @ params[p + "wo"].T).reshape(B, T, heads, dh).transpose(0, 2, 1, 3)
        datt = do @ v.transpose(0, 1, 3, 2)
        dv = att.transpose(0, 1, 3, 2) @ do
        ds = att * (datt - (datt * att).sum(-1, keepdims=True)) / np.sqrt(dh)
        dq = ds @ k
        dk = ds.transpose(0, 1, 3, 2) @ q
        dqkv = np.concatenate([t_.transpose(0, 2, 1, 3).reshape(B, T, d) for t_ in (dq, dk, dv)], -1)
        g[p + "wqkv"] = a.reshape(-1, d).T @ dqkv.reshape(-1, 3 * d)
        g[p + "bqkv"] = dqkv.sum((0, 1))
        da = dqkv @ params[p + "wqkv"].T
        dx1, g[p + "ln1_g"], g[p + "ln1_b"] = layernorm_back(da, params[p + "ln1_g"], ln1)
        dx = dx + dx1
    np.add.at(g["wte"], tokens.reshape(-1), dx.reshape(-1, d))
    g["wpe"][:T] = dx.sum(0)
    return g


def cross_entropy(logits, targets):
    """Mean loss and d loss / d logits."""
    z = logits - logits.max(-1, keepdims=True)
    e = np.exp(z)
    pr = e / e.sum(-1, keepdims=True)
    n = targets.size
    flat = pr.reshape(-1, pr.shape[-1])
    loss = -np.log(flat[np.arange(n), targets.reshape(-1)] + 1e-30).mean()
    flat = flat.copy()
    flat[np.arange(n), targets.reshape(-1)] -= 1
    return loss, (flat / n).reshape(pr.shape)


def decode_step(params, heads, token, pos, past_k, past_v):
    """One decode step with a fixed-size cache, as the ONNX graph computes it (float64 reference).

    past_k/past_v: [L, H, T_max, dh]. Returns (logits [V], present_k, present_v)."""
    d = params["wte"].shape[1]
    dh = d // heads
    T_max = past_k.shape[2]
    x = params["wte"][token] + params["wpe"][pos]
    present_k, present_v = past_k.copy(), past_v.copy()
    visible = np.arange(T_max) <= pos
    for l in range(layer_count(params)):
        p = f"h{l}."
        a, _ = layernorm(x, params[p + "ln1_g"], params[p + "ln1_b"])
        qkv = a @ params[p + "wqkv"] + params[p + "bqkv"]
        q, k, v = (qkv[i * d:(i + 1) * d].reshape(heads, dh) for i in range(3))
        present_k[l, :, pos] = k
        present_v[l, :, pos] = v
        s = np.einsum("hd,htd->ht", q, present_k[l]) / np.sqrt(dh)
        s = np.where(visible, s, -np.inf)
        s = np.exp(s - s.max(-1, keepdims=True))
        att = s / s.sum(-1, keepdims=True)
        o = np.einsum("ht,htd->hd", att, present_v[l]).reshape(d)
        x = x + o @ params[p + "wo"] + params[p + "bo"]
        m, _ = layernorm(x, params[p + "ln2_g"], params[p + "ln2_b"])
        x = x + gelu(m @ params[p + "w1"] + params[p + "b1"])[0] @ params[p + "w2"] + params[p + "b2"]
    xf, _ = layernorm(x, params["lnf_g"], params["lnf_b"])
    return xf @ params["wte"].T, present_k, present_v

"""rime.sdpa_varlen / sdpa_varlen_backward (packed variable-length sequences, THD) on the CPU
engine, with numpy arrays and PyTorch CPU tensors: every sequence's O, Stats, dQ, dK, dV (and
the dSink summed over sequences) against the float64 reference run on that sequence alone;
GQA, an empty and a one-token sequence, per-sequence causal alignment, a sink, a slice of a
packed QKV (token stride wider than a token), and hostile cu_seqlens."""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")

import rime  # noqa: E402
import reference as ref  # noqa: E402
from cases import check_close, check_stats  # noqa: E402

TOL = 3e-3  # float16, f32 accumulation


def cu_of(lens):
    return np.concatenate([[0], np.cumsum(lens)]).astype(np.int32)


def packed(rng, lens, h, d):
    return rng.standard_normal((int(sum(lens)), h, d)).astype(np.float16)


def per_sequence(x, cu, b):
    """Sequence b of packed x as (1, H, L, D) float64."""
    return x[cu[b]:cu[b + 1]].astype(np.float64).transpose(1, 0, 2)[None]


def reference_of(q, k, v, do, cu_q, cu_kv, kw, sink=None, bias=None):
    """Per sequence: (o, lse, dq, dk, dv, dsink, dbias) of the float64 reference; ``bias``
    (1|B, H, max_q, max_kv) is cut to each sequence's lengths."""
    out = []
    for b in range(len(cu_q) - 1):
        if cu_q[b + 1] == cu_q[b] or cu_kv[b + 1] == cu_kv[b]:
            out.append(None)  # nothing to attend (the reference needs both sides)
            continue
        qb, kb, vb, dob = (per_sequence(x, c, b) for x, c in
                           ((q, cu_q), (k, cu_kv), (v, cu_kv), (do, cu_q)))
        bb = None
        if bias is not None:
            bb = bias[min(b, bias.shape[0] - 1)][None, :, :qb.shape[2], :kb.shape[2]]
            bb = bb.astype(np.float64)
        o, lse, _ = ref.forward(qb, kb, vb, sink=sink, bias=bb, **kw)
        dq, dk, dv, ds, dsink = ref.backward(qb, kb, vb, o, dob, sink=sink, bias=bb, **kw)
        out.append((o, lse, dq, dk, dv, dsink, ds))
    return out


CASES = [
    # (q lens, kv lens, hq, hk, d, dv, options, sink)
    ([5, 0, 17, 1], None, 4, 2, 64, 64, dict(causal=True), False),
    ([9, 3, 17, 4], [12, 3, 9, 20], 2, 2, 32, 48,
     dict(causal=True, causal_alignment="bottom_right"), False),
    ([7, 11], None, 4, 4, 64, 64, dict(window=(4, 2)), True),
]


def _run(lens_q, lens_kv, hq, hk, d, dv, opts, with_sink, seed=3):
    lens_kv = lens_kv or lens_q
    rng = np.random.default_rng(seed)
    q, k, v = packed(rng, lens_q, hq, d), packed(rng, lens_kv, hk, d), packed(rng, lens_kv, hk, dv)
    do = packed(rng, lens_q, hq, dv)
    sink = rng.standard_normal(hq).astype(np.float32) if with_sink else None
    cu_q, cu_kv = cu_of(lens_q), cu_of(lens_kv)
    return q, k, v, do, sink, cu_q, cu_kv, max(lens_q), max(lens_kv)


def _reference_kw(opts):
    left, right, bottom_right = rime.functional.mask_bounds(
        opts.get("causal", False), opts.get("causal_alignment", "top_left"), opts.get("window"))
    return dict(left=left, right=right, bottom_right=bottom_right)


def _check(o, stats, grads, q, k, v, do, sink, cu_q, cu_kv, opts, bias=None):
    want = reference_of(q, k, v, do, cu_q, cu_kv, _reference_kw(opts), sink, bias)
    as_np = (lambda x: x.detach().double().numpy()) if hasattr(o, "detach") else np.asarray
    o, stats = as_np(o), as_np(stats)
    dq, dk, dv = (as_np(x) for x in grads[:3])
    for b, w in enumerate(want):
        if w is None:
            continue
        wo, wlse, wdq, wdk, wdv, _, _ = w
        rows, keys = slice(cu_q[b], cu_q[b + 1]), slice(cu_kv[b], cu_kv[b + 1])
        check_close(f"O[{b}]", o[rows].transpose(1, 0, 2)[None], wo, TOL)
        check_stats(stats[rows].T[None, :, :, None], wlse)
        check_close(f"dQ[{b}]", dq[rows].transpose(1, 0, 2)[None], wdq, TOL)
        check_close(f"dK[{b}]", dk[keys].transpose(1, 0, 2)[None], wdk, TOL)
        check_close(f"dV[{b}]", dv[keys].transpose(1, 0, 2)[None], wdv, TOL)
    if sink is not None:
        want_dsink = sum(w[5] for w in want if w is not None)
        check_close("dSink", as_np(grads.dsink).reshape(-1), want_dsink, TOL)


@pytest.mark.parametrize("case", CASES, ids=["gqa-causal-empty", "cross-bottom-right", "sink-window"])
def test_varlen_matches_each_sequence_alone_numpy(case):
    q, k, v, do, sink, cu_q, cu_kv, mq, mkv = _run(*case)
    opts = case[6]
    o, stats = rime.sdpa_varlen(q, k, v, cu_q, cu_kv, mq, mkv, sink=sink, **opts)
    assert o.shape == (q.shape[0], q.shape[1], v.shape[2]) and stats.shape == q.shape[:2]
    grads = rime.sdpa_varlen_backward(q, k, v, o, do, stats, cu_q, cu_kv, mq, mkv, sink=sink,
                                      dsink=sink is not None, **opts)
    assert grads.dq.shape == q.shape and grads.dk.shape == k.shape and grads.dv.shape == v.shape
    assert grads.dbias is None
    _check(o, stats, grads, q, k, v, do, sink, cu_q, cu_kv, opts)


def test_varlen_on_torch_tensors_and_a_packed_qkv_slice():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
    lens = [6, 1, 13]
    q, k, v, do, _, cu_q, _, mq, _ = _run(lens, None, 2, 2, 64, 64, {}, False)
    # One (T, 3, H, D) buffer: q, k and v are views with a token stride of 3 x H x D.
    qkv = torch.tensor(np.stack([q, k, v], axis=1))
    tq, tk, tv = qkv[:, 0], qkv[:, 1], qkv[:, 2]
    assert tq.stride(0) == 3 * 2 * 64
    cu = torch.tensor(cu_q)
    o, stats = rime.sdpa_varlen(tq, tk, tv, cu, cu, mq, mq, causal=True)
    grads = rime.sdpa_varlen_backward(tq, tk, tv, o, torch.tensor(do), stats, cu, cu, mq, mq,
                                      causal=True)
    _check(o, stats, grads, q, k, v, do, None, cu_q, cu_q, dict(causal=True))
    # The same values packed densely give the same outputs.
    o2, _ = rime.sdpa_varlen(torch.tensor(q), torch.tensor(k), torch.tensor(v), cu, cu, mq, mq,
                             causal=True)
    assert torch.equal(o, o2)


def test_varlen_plans_are_cached_per_token_bucket():
    rime.plan_cache_clear()
    for lens in ([5, 9], [6, 8], [7, 7]):  # 14 tokens each time, then one more call
        q, k, v, _, _, cu, _, _, _ = _run(lens, None, 2, 2, 32, 32, {}, False)
        rime.sdpa_varlen(q, k, v, cu, cu, 9, 9)
    info = rime.plan_cache_info()
    assert info["misses"] == 1 and info["hits"] == 2, info


def test_hostile_cu_seqlens_are_refused_with_their_name():
    q, k, v, _, _, cu, _, mq, _ = _run([4, 6], None, 2, 2, 32, 32, {}, False)
    with pytest.raises(rime.TensorError, match="cu_seqlens_q.*int32"):
        rime.sdpa_varlen(q, k, v, cu.astype(np.int64), cu, mq, mq)
    with pytest.raises(rime.TensorError, match="cu_seqlens_kv.*shape"):
        rime.sdpa_varlen(q, k, v, cu, cu[:1], mq, mq)
    with pytest.raises(ValueError, match="cu_seqlens_kv: 1 sequences"):
        rime.sdpa_varlen(q, k, v, cu, np.array([0, 10], np.int32), mq, mq)
    # Decreasing: a negative length.
    with pytest.raises(rime.TensorError, match="length -2 for batch 1.*from cu_seqlens_q"):
        rime.sdpa_varlen(q, k, v, np.array([0, 6, 4], np.int32), cu, mq, mq)
    # Longer than max_seqlen.
    with pytest.raises(rime.TensorError, match="length 6 for batch 1; allowed 0..=5"):
        rime.sdpa_varlen(q, k, v, cu, cu, 5, 6)
    # Past the tokens q holds.
    with pytest.raises(rime.EngineError, match="sequence 1 has 8 tokens.*from cu_seqlens_q"):
        rime.sdpa_varlen(q, k, v, np.array([0, 4, 12], np.int32), cu, 8, 8)
    # The same on the key side names cu_seqlens_kv.
    with pytest.raises(rime.EngineError, match="sequence 1 has 8 tokens.*from cu_seqlens_kv"):
        rime.sdpa_varlen(q, k, v, cu, np.array([0, 4, 12], np.int32), 8, 8)
    with pytest.raises(ValueError, match="max_seqlen_q"):
        rime.sdpa_varlen(q, k, v, cu, cu, 0, mq)
    with pytest.raises(rime.TensorError, match="q.*tokens, heads, head dim"):
        rime.sdpa_varlen(q[None], k, v, cu, cu, mq, mq)


def _autograd_case(torch):
    lens = [9, 0, 14, 1]
    q, k, v, do, _, cu, _, mq, _ = _run(lens, None, 4, 2, 64, 64, {}, False, seed=11)
    t = {n: torch.tensor(x).to(torch.bfloat16) for n, x in (("q", q), ("k", k), ("v", v),
                                                             ("do", do))}
    return t, torch.tensor(cu), mq


@pytest.mark.parametrize("via", ["custom_op", "function"])
@pytest.mark.parametrize("extra", ["none", "bias", "sink"])
def test_attention_varlen_gradients_are_the_functional_ones(via, extra):
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
    t, cu, mq = _autograd_case(torch)
    names = ("q", "k", "v")
    if extra == "bias":
        bias = (torch.randn(1, 4, mq, mq, generator=torch.Generator().manual_seed(2)) * 0.5)
        t["bias"] = bias.to(torch.bfloat16)
        names += ("bias",)
    if extra == "sink":
        t["sink"] = torch.tensor([0.5, -1.0, 2.0, 0.0])
        names += ("sink",)
    leaves = {n: t[n].clone().requires_grad_() for n in names}
    qkv = [leaves[n] for n in ("q", "k", "v")]
    b, s = leaves.get("bias"), leaves.get("sink")
    if via == "custom_op":
        o = rime.attention_varlen(*qkv, cu, cu, mq, mq, bias=b, sink=s, causal=True)
    else:
        left, right, br = rime.functional.mask_bounds(True, "top_left", None)
        o = rime.AttentionVarlenFunction.apply(*qkv, cu, cu, mq, mq, b, s, None, left, right, br,
                                               False)
    o.backward(t["do"])
    b, s = t.get("bias"), t.get("sink")
    o2, stats = rime.sdpa_varlen(t["q"], t["k"], t["v"], cu, cu, mq, mq, causal=True, bias=b,
                                 sink=s)
    g = rime.sdpa_varlen_backward(t["q"], t["k"], t["v"], o2, t["do"], stats, cu, cu, mq, mq,
                                  causal=True, bias=b, dbias=b is not None, sink=s,
                                  dsink=s is not None)
    assert torch.equal(o, o2)
    want = dict(zip(("q", "k", "v", "bias"), g[:4]))
    if s is not None:
        want["sink"] = g.dsink.reshape(s.shape)
    for n in names:
        assert torch.equal(leaves[n].grad, want[n]), n


def test_attention_varlen_custom_ops_pass_opcheck_and_compile():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
    t, cu, mq = _autograd_case(torch)
    for sink in (None, torch.tensor([0.5, -1.0, 2.0, 0.0])):
        fwd = (t["q"], t["k"], t["v"], cu, cu, mq, mq, None, sink, None, None, 0, False, False)
        torch.library.opcheck(torch.ops.rime.attention_varlen_forward.default, fwd)
        o, stats = torch.ops.rime.attention_varlen_forward(*fwd)
        bwd = (t["do"], t["q"], t["k"], t["v"], o, stats, cu, cu, mq, mq, None, sink, None, None,
               0, False, False, sink is not None, True)
        torch.library.opcheck(torch.ops.rime.attention_varlen_backward.default, bwd)
    torch._dynamo.reset()

    def step(q, k, v):
        return rime.attention_varlen(q, k, v, cu, cu, mq, mq, causal=True).float().square().sum()

    explanation = torch._dynamo.explain(step)(t["q"], t["k"], t["v"])
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_graph_api_ragged_offsets_give_the_varlen_results():
    """The cuDNN-frontend graph API with `set_ragged_offset` on every token tensor (THD
    strides, offsets `cu_seqlens x H x D`) runs the same graph as `sdpa_varlen_backward`."""
    lens = [5, 0, 17, 1]
    h, d = 2, 32
    q, k, v, do, _, cu, _, s, _ = _run(lens, None, h, h, d, d, {}, False, seed=13)
    o, stats = rime.sdpa_varlen(q, k, v, cu, cu, s, s, causal=True)
    want = rime.sdpa_varlen_backward(q, k, v, o, do, stats, cu, cu, s, s, causal=True)
    b, t = len(lens), int(cu[-1])
    g = rime.Graph(io_data_type="f16")
    thd = [s * h * d, d, h * d, 1]
    names = ("Q", "K", "V", "O", "dO")
    q_t, k_t, v_t, o_t, do_t = (g.tensor(n, [b, h, s, d], stride=thd) for n in names)
    st_t = g.tensor("Stats", [b, h, s, 1], stride=[s * h, 1, h, 1], data_type="f32")
    offsets = g.tensor("tokens", [b + 1, 1, 1, 1], data_type="i64")
    stats_offsets = g.tensor("stats_tokens", [b + 1, 1, 1, 1], data_type="i64")
    lq, lkv = (g.tensor(n, [b, 1, 1, 1], data_type="i32") for n in ("seq_q", "seq_kv"))
    dq_t, dk_t, dv_t, _, _ = g.sdpa_backward(
        q_t, k_t, v_t, o_t, do_t, st_t, use_causal_mask=True, use_padding_mask=True,
        seq_len_q=lq, seq_len_kv=lkv, max_total_seq_len_q=t, max_total_seq_len_kv=t)
    for x in (q_t, k_t, v_t, o_t, do_t, dq_t, dk_t, dv_t):
        x.set_ragged_offset(offsets)
    st_t.set_ragged_offset(stats_offsets)
    assert q_t.ragged_offset == offsets and k_t.ragged_offset == offsets
    for x, n in ((dq_t, "dQ"), (dk_t, "dK"), (dv_t, "dV")):
        x.set_dim([b, h, s, d]).set_stride(thd).set_name(n).set_output(True)
    g.validate()
    out = {n: np.full(q.shape, np.nan, np.float16) for n in ("dq", "dk", "dv")}
    lens32 = np.array(lens, np.int32).reshape(b, 1, 1, 1)
    g.execute({"Q": q, "K": k, "V": v, "O": o, "dO": do, "Stats": stats,
               "tokens": (cu.astype(np.int64) * h * d).reshape(b + 1, 1, 1, 1),
               "stats_tokens": (cu.astype(np.int64) * h).reshape(b + 1, 1, 1, 1),
               "seq_q": lens32, "seq_kv": lens32,
               dq_t: out["dq"], dk_t: out["dk"], dv_t: out["dv"]})
    for n, w in zip(("dq", "dk", "dv"), want[:3]):
        assert np.array_equal(out[n], w), n


@pytest.mark.parametrize("per_batch", [True, False], ids=["bias-per-batch", "bias-broadcast"])
def test_varlen_bias_and_dbias_per_sequence(per_batch):
    lens = [6, 13, 1]
    q, k, v, do, _, cu, _, s, _ = _run(lens, None, 2, 2, 32, 32, {}, False, seed=17)
    rng = np.random.default_rng(19)
    b = len(lens) if per_batch else 1
    bias = (rng.standard_normal((b, 2, s, s)) * 0.5).astype(np.float16)
    o, stats = rime.sdpa_varlen(q, k, v, cu, cu, s, s, causal=True, bias=bias)
    g = rime.sdpa_varlen_backward(q, k, v, o, do, stats, cu, cu, s, s, causal=True, bias=bias,
                                  dbias=True, deterministic=True)
    assert g.dbias.shape == bias.shape
    want = reference_of(q, k, v, do, cu, cu, _reference_kw(dict(causal=True)), bias=bias)
    _check(o, stats, g, q, k, v, do, None, cu, cu, dict(causal=True), bias=bias)
    # dBias: each sequence's (len, len) block (summed over the batch when broadcast).
    full = np.zeros((len(lens), 2, s, s))
    for n, w in enumerate(want):
        full[n, :, :lens[n], :lens[n]] = w[6][0]
    expect = full if per_batch else full.sum(axis=0, keepdims=True)
    for n in range(b):
        rows = lens[n] if per_batch else s
        check_close(f"dBias[{n}]", g.dbias[n, :, :rows, :rows].astype(np.float64),
                    expect[n, :, :rows, :rows], TOL)


def test_a_head_major_q_is_refused_by_name_and_outputs_are_packed():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")
    q, k, v, _, _, cu, _, mq, _ = _run([4, 6], None, 2, 2, 32, 32, {}, False)
    # (T, H, D) viewed over (H, T, D) memory: tokens are not the outermost dim.
    head_major = torch.tensor(q).transpose(0, 1).contiguous().transpose(0, 1)
    cu_t = torch.tensor(cu)
    with pytest.raises(rime.UnsupportedGraph) as e:
        rime.sdpa_varlen(head_major, torch.tensor(k), torch.tensor(v), cu_t, cu_t, mq, mq)
    assert e.value.codes == ["LAY004"] and all("`q`" in str(r.subject) for r in e.value.reasons)
    # A packed q of any order gets packed outputs.
    o, stats = rime.sdpa_varlen(torch.tensor(q), torch.tensor(k), torch.tensor(v), cu_t, cu_t,
                                mq, mq)
    assert o.is_contiguous() and stats.is_contiguous()

"""rime.sdpa and rime.sdpa_backward on numpy float16 arrays (the CPU engine) against the
float64 reference in reference.py."""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")

import rime
import reference as ref
from cases import Case, arrays, check_close, check_stats, reference, rime_options

TOL = 3e-3  # float16 outputs of f32 arithmetic against float64 on the same rounded inputs

CASES = [
    Case(),
    Case(causal=True),
    Case(sq=20, skv=40, causal=True, alignment="bottom_right"),
    Case(window=(8, 4)),
    Case(window=(5, None), alignment="bottom_right", sq=24, skv=30),
    Case(b=2, bias=(2, 2), dbias=True),
    Case(b=2, bias=(1, 2), dbias=True, causal=True),
    Case(b=2, bias=(2, 1), dbias=True),
    Case(b=2, bias=(1, 1), dbias=True),
    Case(b=2, bias=(2, 2), dbias=False),
    Case(hq=4, hk=2),
    Case(hq=4, hk=1, causal=True),
    Case(b=3, seq_lens=((33, 10, 1), (47, 30, 5)), causal=True, alignment="bottom_right"),
    Case(b=2, seq_lens=((20, 33), (47, 12))),
    Case(hq=4, hk=4, causal=True, alibi=True),
    Case(sink=True),
    Case(layout="bshd", causal=True),
    Case(d=16, dv=8),
    Case(scale=0.3, bias=(1, 2), dbias=True),
]


def host(x, layout, dtype=np.float16):
    """A numpy array of ``x`` (B, H, S, D) in ``layout`` (a BSHD array transposed)."""
    if layout == "bshd":
        return np.ascontiguousarray(x.transpose(0, 2, 1, 3).astype(dtype)).transpose(0, 2, 1, 3)
    return np.ascontiguousarray(x.astype(dtype))


def inputs(case, a):
    kw = rime_options(case)
    if "bias" in a:
        kw["bias"] = a["bias"].astype(np.float16)
    if "sink" in a:
        kw["sink"] = a["sink"].astype(np.float32)
    if "seq_q" in a:
        kw["seq_lens"] = (a["seq_q"], a["seq_kv"])
    return [host(a[n], case.layout) for n in ("q", "k", "v")], kw


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_forward_matches_the_reference(case):
    a = arrays(case)
    (q, k, v), kw = inputs(case, a)
    o, stats = rime.sdpa(q, k, v, **kw)
    want_o, want_lse, _ = reference(case, a)
    assert o.dtype == np.float16 and o.shape == want_o.shape
    assert stats.dtype == np.float32 and stats.shape == want_lse.shape
    check_close("O", o, want_o, TOL)
    check_stats(stats, want_lse)


@pytest.mark.parametrize("case", CASES, ids=Case.id)
def test_backward_matches_the_reference(case):
    a = arrays(case)
    (q, k, v), kw = inputs(case, a)
    want_o, want_lse, rkw = reference(case, a)
    o = host(want_o, case.layout)
    stats = want_lse.astype(np.float32)
    do = host(a["do"], case.layout)
    g = rime.sdpa_backward(q, k, v, o, do, stats, dbias=case.dbias, dsink=case.sink, **kw)
    dq, dk, dv, ds, dsink = ref.backward(a["q"], a["k"], a["v"], o.astype(np.float64), a["do"], **rkw)
    check_close("dQ", g.dq, dq, TOL)
    check_close("dK", g.dk, dk, TOL)
    check_close("dV", g.dv, dv, TOL)
    # Outputs follow their twin's layout (a BSHD q gets a BSHD dq).
    assert np.argsort(g.dq.strides).tolist() == np.argsort(q.strides).tolist()
    if case.dbias:
        assert g.dbias.shape == a["bias"].shape
        check_close("dBias", g.dbias, ref.reduce_like(ds, a["bias"].shape), TOL)
    else:
        assert g.dbias is None
    if case.sink:
        assert g.dsink.shape == (1, case.hq, 1, 1) and g.dsink.dtype == np.float32
        check_close("dSink", g.dsink.reshape(-1), dsink, TOL)
    else:
        assert g.dsink is None


def test_packed_qkv_slices_are_used_in_place():
    """q, k, v as views of one (B, S, 3, H, D) array: strides the graph model accepts."""
    case = Case(hq=2, hk=2, sq=40, skv=40, causal=True)
    a = arrays(case)
    qkv = np.empty((1, 40, 3, 2, 16), dtype=np.float16)
    for n, name in enumerate("qkv"):
        qkv[:, :, n] = a[name].transpose(0, 2, 1, 3)
    q, k, v = (qkv[:, :, n].transpose(0, 2, 1, 3) for n in range(3))
    assert not q.flags.c_contiguous
    o, stats = rime.sdpa(q, k, v, causal=True)
    want_o, want_lse, _ = reference(case, a)
    check_close("O", o, want_o, TOL)
    g = rime.sdpa_backward(q, k, v, o, host(a["do"], "bhsd"), stats, causal=True)
    dq, dk, dv, _, _ = ref.backward(a["q"], a["k"], a["v"], o.astype(np.float64), a["do"],
                                    right=0)
    check_close("dQ", g.dq, dq, TOL)
    check_close("dK", g.dk, dk, TOL)
    check_close("dV", g.dv, dv, TOL)


def test_fully_masked_rows_give_zero_output_and_infinite_stats():
    case = Case(b=2, seq_lens=((10, 33), (47, 0)))
    a = arrays(case)
    (q, k, v), kw = inputs(case, a)
    o, stats = rime.sdpa(q, k, v, **kw)
    assert np.all(o[0, :, 10:] == 0) and np.all(np.isinf(stats[0, :, 10:]))
    assert np.all(o[1] == 0) and np.all(np.isinf(stats[1]))
    g = rime.sdpa_backward(q, k, v, o, host(a["do"], "bhsd"), stats, **kw)
    assert np.all(g.dq[1] == 0) and np.all(np.isfinite(g.dq))


def test_nan_padding_past_the_lengths_is_never_read():
    """A padded batch's rows past its lengths hold whatever the caller left there (an
    uninitialised buffer: NaN, say) in every input, Stats included: the results are those of
    finite padding, bit for bit, and finite."""
    case = Case(b=3, seq_lens=((33, 10, 1), (47, 30, 5)), causal=True, layout="bshd",
                bias=(1, 2), dbias=True)
    a = arrays(case)
    (q, k, v), kw = inputs(case, a)
    do = host(a["do"], case.layout)
    o, stats = rime.sdpa(q, k, v, **kw)
    g = rime.sdpa_backward(q, k, v, o, do, stats, dbias=True, **kw)

    def nan_past(x, lens):
        y = x.copy(order="K")  # keeps the layout's strides
        for n, length in enumerate(lens):
            y[n, :, length:] = np.nan
        return y

    sq, skv = a["seq_q"], a["seq_kv"]
    nq, nk, nv = nan_past(q, sq), nan_past(k, skv), nan_past(v, skv)
    assert nq.strides == q.strides and not nq.flags.c_contiguous  # still BSHD
    o2, stats2 = rime.sdpa(nq, nk, nv, **kw)
    assert np.array_equal(o2, o) and np.array_equal(stats2, stats)
    g2 = rime.sdpa_backward(nq, nk, nv, nan_past(o, sq), nan_past(do, sq), nan_past(stats, sq),
                            dbias=True, **kw)
    for name in ("dq", "dk", "dv", "dbias"):
        got, want = getattr(g2, name), getattr(g, name)
        assert np.all(np.isfinite(got)), name
        assert np.array_equal(got, want), name


def test_return_stats_false_returns_o_alone():
    a = arrays(Case())
    o = rime.sdpa(*(host(a[n], "bhsd") for n in "qkv"), return_stats=False)
    assert isinstance(o, np.ndarray) and o.shape == (1, 2, 33, 16)

"""Bad tensors and unsupported graphs are Python exceptions naming the argument or carrying
reason codes, never a crash; nothing is written when a call is refused."""

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")

import rime


def qkv(b=1, h=2, s=16, d=16, dtype=np.float16):
    rng = np.random.default_rng(1)
    return [rng.standard_normal((b, h, s, d)).astype(dtype) for _ in range(3)]


def test_exception_classes_form_one_hierarchy():
    assert issubclass(rime.UnsupportedGraph, rime.RimeError)
    assert issubclass(rime.TensorError, rime.RimeError) and issubclass(rime.TensorError, ValueError)
    assert issubclass(rime.GraphError, rime.RimeError)
    assert issubclass(rime.EngineError, rime.RimeError)


@pytest.mark.parametrize(
    "mutate, argument, words",
    [
        (lambda q, k, v: (q.astype(np.float32), k, v), "q", "float16 or bfloat16"),
        (lambda q, k, v: (q, k.astype(np.float32), v), "k", "must be f16"),
        (lambda q, k, v: (q, k, v[..., ::2]), "v", "stride 2"),
        (lambda q, k, v: (q, k[:, :, ::-1], v), "k", "negative strides"),
        (lambda q, k, v: (q, [[1.0]], v), "k", "not a torch.Tensor or numpy.ndarray"),
        (lambda q, k, v: (q, k, v[:, :, :0]), "v", "no elements"),
        (lambda q, k, v: (q, k, v.astype(">f2")), "v", "does not take"),
    ],
    ids=["q-f32", "k-dtype", "v-head-dim-strided", "k-negative-stride", "k-list", "v-empty",
         "v-big-endian"],
)
def test_bad_tensors_name_their_argument(mutate, argument, words):
    q, k, v = mutate(*qkv())
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q, k, v)
    assert e.value.argument == argument
    assert words in str(e.value)


def test_rank_other_than_4_names_the_argument():
    q, k, v = qkv()
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q[0], k, v)
    assert e.value.argument == "q" and "rank-4" in str(e.value)


def test_unsupported_graph_carries_reason_codes_as_objects():
    # Bottom-right causal with Sq > Skv and no padding mask is refused by every engine.
    rng = np.random.default_rng(2)
    q = rng.standard_normal((1, 2, 32, 16)).astype(np.float16)
    k = rng.standard_normal((1, 2, 16, 16)).astype(np.float16)
    with pytest.raises(rime.UnsupportedGraph) as e:
        rime.sdpa(q, k, k, causal=True, causal_alignment="bottom_right")
    reasons = e.value.reasons
    assert reasons and all(isinstance(r, rime.Reason) for r in reasons)
    code = reasons[0].code
    assert code in e.value.codes and code in str(e.value)
    assert rime.explain(code).strip()
    assert all(r.hint for r in reasons)


def test_head_dims_that_disagree_are_reasons_naming_the_tensor():
    q, k, v = qkv()
    k = np.zeros((1, 2, 16, 8), dtype=np.float16)
    with pytest.raises(rime.UnsupportedGraph) as e:
        rime.sdpa(q, k, v)
    assert any(r.tensor in ("q", "k") for r in e.value.reasons), e.value.reasons


def test_explain_refuses_unknown_codes():
    with pytest.raises(ValueError):
        rime.explain("NOPE01")


def test_option_errors_name_the_option():
    q, k, v = qkv()
    with pytest.raises(ValueError, match="causal_alignment"):
        rime.sdpa(q, k, v, causal=True, causal_alignment="middle")
    with pytest.raises(ValueError, match="window"):
        rime.sdpa(q, k, v, causal=True, window=(4, 2))
    with pytest.raises(ValueError, match="scale"):
        rime.sdpa(q, k, v, scale=float("nan"))
    o, stats = rime.sdpa(q, k, v)
    with pytest.raises(ValueError, match="dbias"):
        rime.sdpa_backward(q, k, v, o, o, stats, dbias=True)
    with pytest.raises(ValueError, match="seq_lens"):
        rime.sdpa(q, k, v, seq_lens=(np.array([16], np.int32),))


def test_seq_lens_must_be_int32_and_in_range():
    q, k, v = qkv()
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q, k, v, seq_lens=(np.array([16], np.int64), np.array([16], np.int32)))
    assert e.value.argument == "seq_len_q"
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q, k, v, seq_lens=(np.array([17], np.int32), np.array([16], np.int32)))
    assert e.value.argument == "seq_len_q" and "17" in str(e.value)


def test_stats_of_the_wrong_type_names_stats():
    q, k, v = qkv()
    o, stats = rime.sdpa(q, k, v)
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa_backward(q, k, v, o, o, stats.astype(np.float16))
    assert e.value.argument == "stats"

"""On a CUDA GPU with PyTorch (the lead's H200 run: crates/python/gpu_check.sh): rime's
sm120 kernels from PyTorch, zero-copy on the current stream.

- gradients of ``rime.attention`` against PyTorch's MATH backend in float64 on the same
  (rounded) inputs: bias + dBias per batch and broadcast, GQA, causal top-left and
  bottom-right, padding (sequence lengths), bf16 and fp16;
- deterministic backward: bitwise equal over repeated calls;
- attention sinks with dSink against rime's CPU engine (rows that attend to the sink alone,
  padded rows), deterministic dSink bitwise equal over repeats;
- NaN in a padded batch's rows past its lengths: never read (d64, d128, d192, with and
  without a bias, every route the analyzer picks);
- a ``torch.compile`` training step with no graph break;
- a non-default stream: rime's kernels are ordered after the work queued before them and
  before the work queued after them;
- errors on CUDA tensors: misaligned, mixed devices, a head dim the kernels do not take;
- ``rime.sdpa_varlen`` (packed THD, an empty sequence, a packed-QKV slice) against the CPU
  engine on the same inputs, deterministic gradients bitwise equal over repeats.

Every test is skipped, with the reason, without a usable GPU.
"""

import shutil

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

import rime  # noqa: E402

pytestmark = pytest.mark.gpu


def _gpu_reason():
    if not torch.cuda.is_available():
        return "PyTorch sees no CUDA device"
    ok, why = rime.cuda_status()
    return None if ok else f"rime cannot use CUDA here: {why}"


_REASON = _gpu_reason()
if _REASON:
    pytest.skip(_REASON, allow_module_level=True)

from torch.nn.attention import SDPBackend, sdpa_kernel  # noqa: E402
import torch.nn.functional as F  # noqa: E402

DEV = torch.device("cuda", 0)
TOL = {torch.bfloat16: 2e-2, torch.float16: 5e-3}


def rel(a, b):
    a, b = a.double(), b.double()
    den = b.norm()
    return ((a - b).norm() / den).item() if den > 0 else (a - b).norm().item()


def keep_mask(b, sq, skv, causal, bottom_right, seq_q, seq_kv):
    """(B, 1, Sq, Skv) bool: kept pairs (padded query rows keep their valid keys, so that the
    float64 reference has no empty rows; their dO is zero)."""
    i = torch.arange(sq, device=DEV)[:, None]
    j = torch.arange(skv, device=DEV)[None, :]
    out = torch.zeros((b, 1, sq, skv), dtype=torch.bool, device=DEV)
    for n in range(b):
        ql = sq if seq_q is None else int(seq_q[n])
        kl = skv if seq_kv is None else int(seq_kv[n])
        keep = j < kl
        if causal:
            keep = keep & (j <= i + ((kl - ql) if bottom_right else 0))
        out[n, 0] = keep
    return out


def math_reference(q, k, v, do, bias, causal, bottom_right, seq_q, seq_kv):
    """O and the gradients by PyTorch's MATH backend in float64."""
    b, hq, sq, _ = q.shape
    hk, skv = k.shape[1], k.shape[2]
    x = [t.detach().double().requires_grad_() for t in (q, k, v)]
    bias64 = bias.detach().double().requires_grad_() if bias is not None else None
    kk = x[1].repeat_interleave(hq // hk, dim=1)
    vv = x[2].repeat_interleave(hq // hk, dim=1)
    keep = keep_mask(b, sq, skv, causal, bottom_right, seq_q, seq_kv)
    mask = torch.zeros(keep.shape, dtype=torch.float64, device=DEV).masked_fill(~keep, float("-inf"))
    if bias64 is not None:
        mask = mask + bias64
    with sdpa_kernel(SDPBackend.MATH):
        o = F.scaled_dot_product_attention(x[0], kk, vv, attn_mask=mask)
    o.backward(do.double())
    grads = [t.grad for t in x] + [bias64.grad if bias64 is not None else None]
    return o.detach(), grads


def row_valid(b, sq, seq_q):
    valid = torch.ones((b, 1, sq, 1), dtype=torch.bool, device=DEV)
    if seq_q is not None:
        for n in range(b):
            valid[n, :, int(seq_q[n]):] = False
    return valid


CASES = [
    # (name, b, hq, hk, sq, skv, d, bias shape or None, causal, bottom_right, seq lens)
    ("bias-per-batch", 2, 4, 4, 128, 128, 64, (2, 4), False, False, None),
    ("bias-broadcast-heads", 2, 4, 4, 96, 160, 64, (1, 4), True, False, None),
    ("bias-broadcast-batch", 2, 4, 4, 128, 128, 128, (2, 1), False, False, None),
    ("bias-broadcast-all", 2, 2, 2, 64, 64, 64, (1, 1), True, False, None),
    ("gqa-8-2", 2, 8, 2, 256, 256, 128, None, True, False, None),
    ("mqa-4-1", 1, 4, 1, 100, 300, 64, None, False, False, None),
    ("causal-top-left", 1, 4, 4, 200, 330, 64, None, True, False, None),
    ("causal-bottom-right", 1, 4, 4, 200, 330, 128, None, True, True, None),
    ("padding", 3, 4, 4, 128, 160, 64, None, False, False, ((128, 70, 9), (160, 100, 33))),
    ("padding-causal-bottom-right", 2, 4, 2, 96, 128, 64, None, True, True, ((96, 40), (128, 90))),
]


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "fp16"])
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_attention_gradients_match_the_float64_math_backend(case, dtype):
    _, b, hq, hk, sq, skv, d, bias_shape, causal, bottom_right, lens = case
    torch.manual_seed(1)
    q = torch.randn((b, hq, sq, d), device=DEV, dtype=dtype).requires_grad_()
    k = torch.randn((b, hk, skv, d), device=DEV, dtype=dtype).requires_grad_()
    v = torch.randn((b, hk, skv, d), device=DEV, dtype=dtype).requires_grad_()
    bias = None
    if bias_shape:
        bias = (0.5 * torch.randn((*bias_shape, sq, skv), device=DEV, dtype=dtype)).requires_grad_()
    seq_q = seq_kv = None
    if lens:
        seq_q = torch.tensor(lens[0], dtype=torch.int32, device=DEV)
        seq_kv = torch.tensor(lens[1], dtype=torch.int32, device=DEV)
    do = torch.randn((b, hq, sq, d), device=DEV, dtype=dtype)
    valid = row_valid(b, sq, lens[0] if lens else None)
    do = do * valid
    o = rime.attention(q, k, v, bias=bias, causal=causal,
                       causal_alignment="bottom_right" if bottom_right else "top_left",
                       seq_lens=None if lens is None else (seq_q, seq_kv))
    o.backward(do)
    want_o, want = math_reference(q, k, v, do, bias, causal, bottom_right,
                                  lens[0] if lens else None, lens[1] if lens else None)
    tol = TOL[dtype]
    assert rel(o * valid, want_o * valid) <= tol
    if lens:
        assert torch.all(o[~valid.expand_as(o)] == 0), "padded rows of O are zero"
    for name, got, exp in zip(("dq", "dk", "dv"), (q.grad, k.grad, v.grad), want[:3]):
        assert rel(got, exp) <= tol, f"{name}: {rel(got, exp):.3g}"
    if bias is not None:
        assert bias.grad.shape == bias.shape
        assert rel(bias.grad, want[3]) <= tol, f"dbias: {rel(bias.grad, want[3]):.3g}"


@pytest.mark.parametrize("bias_shape", [None, (2, 4)], ids=["no-bias", "bias-per-batch"])
def test_deterministic_gradients_are_bitwise_equal_over_repeats(bias_shape):
    torch.manual_seed(2)
    b, h, s, d = 2, 4, 512, 128
    q, k, v = (torch.randn((b, h, s, d), device=DEV, dtype=torch.bfloat16) for _ in range(3))
    bias = torch.randn((*bias_shape, s, s), device=DEV, dtype=torch.bfloat16) if bias_shape else None
    do = torch.randn((b, h, s, d), device=DEV, dtype=torch.bfloat16)
    runs = []
    for _ in range(5):
        leaves = [t.clone().requires_grad_() for t in (q, k, v)]
        bleaf = bias.clone().requires_grad_() if bias is not None else None
        o = rime.attention(*leaves, bias=bleaf, causal=True, deterministic=True)
        o.backward(do)
        runs.append([t.grad for t in leaves] + ([bleaf.grad] if bleaf is not None else []))
    for other in runs[1:]:
        for a, c in zip(runs[0], other):
            assert torch.equal(a, c)
    want_o, want = math_reference(q, k, v, do, bias, True, False, None, None)
    assert rel(runs[0][0], want[0]) <= TOL[torch.bfloat16]


def test_deterministic_broadcast_dbias_is_bitwise_and_right():
    """A (1, H) bias with dBias, deterministic: two_kernel or ordered_dbias (BIA003 refuses
    atomic and relay) sum dBias over the batch in a fixed order, so it repeats bit for bit."""
    torch.manual_seed(5)
    q = torch.randn((2, 2, 128, 64), device=DEV, dtype=torch.bfloat16)
    bias = torch.randn((1, 2, 128, 128), device=DEV, dtype=torch.bfloat16)
    do = torch.randn_like(q)
    o, stats = rime.sdpa(q, q, q, bias=bias)
    runs = [rime.sdpa_backward(q, q, q, o, do, stats, bias=bias, dbias=True, deterministic=True)
            for _ in range(3)]
    for g in runs[1:]:
        for a, c in zip(runs[0][:4], g[:4]):
            assert torch.equal(a, c)
    _, want = math_reference(q, q, q, do, bias, False, False, None, None)
    assert runs[0].dbias.shape == bias.shape
    assert rel(runs[0].dbias, want[3]) <= TOL[torch.bfloat16]


@pytest.mark.parametrize("deterministic", [False, True], ids=["fastest", "deterministic"])
def test_sinks_match_the_cpu_engine_and_deterministic_dsink_repeats(deterministic):
    """Per-head sinks with dSink on CUDA against rime's CPU engine on the same values:
    bottom-right causal with kv_len < q_len under a padding mask, so that some rows attend to the
    sink alone (O = 0, Stats = sink) and some are padded (Stats = +inf). dSink is summed in a
    fixed order on every route, so the deterministic runs repeat bit for bit."""
    torch.manual_seed(6)
    b, h, sq, skv, d = 2, 4, 96, 64, 64
    q = torch.randn((b, h, sq, d), device=DEV, dtype=torch.bfloat16)
    k, v = (torch.randn((b, h, skv, d), device=DEV, dtype=torch.bfloat16) for _ in range(2))
    do = torch.randn_like(q)
    sink = torch.randn(h, device=DEV) + 2.0
    lens = (torch.tensor([96, 50], dtype=torch.int32), torch.tensor([40, 64], dtype=torch.int32))
    kw = dict(causal=True, causal_alignment="bottom_right")
    gpu = dict(kw, sink=sink, seq_lens=tuple(x.to(DEV) for x in lens))
    cpu = dict(kw, sink=sink.cpu(), seq_lens=lens)
    o, stats = rime.sdpa(q, k, v, **gpu)
    want_o, want_stats = rime.sdpa(q.cpu(), k.cpu(), v.cpu(), **cpu)
    tol = TOL[torch.bfloat16]
    assert rel(o.cpu(), want_o) <= tol
    assert torch.equal(torch.isinf(stats.cpu()), torch.isinf(want_stats))
    kept = torch.isfinite(want_stats)
    assert rel(stats.cpu()[kept], want_stats[kept]) <= 1e-5
    runs = [rime.sdpa_backward(q, k, v, o, do, stats, dsink=True, deterministic=deterministic,
                               **gpu) for _ in range(3 if deterministic else 1)]
    want = rime.sdpa_backward(q.cpu(), k.cpu(), v.cpu(), o.cpu(), do.cpu(), stats.cpu(),
                              dsink=True, **cpu)
    names = ("dq", "dk", "dv", "dsink")
    for name in names:
        got, exp = getattr(runs[0], name).cpu(), getattr(want, name)
        assert rel(got, exp) <= tol, f"{name}: {rel(got, exp):.3g}"
    for g in runs[1:]:
        for name in names:
            assert torch.equal(getattr(runs[0], name), getattr(g, name)), name


def nan_past(x, lens):
    """``x`` (B, H, S, ...) with the rows of batch n from ``lens[n]`` on set to NaN."""
    y = x.clone()
    for n, length in enumerate(lens.tolist()):
        y[n, :, length:] = float("nan")
    return y


@pytest.mark.parametrize("deterministic", [False, True], ids=["fastest", "deterministic"])
@pytest.mark.parametrize("d", [64, 128, 192])
def test_nan_padding_past_the_lengths_is_never_read(d, deterministic):
    """A padded batch under a padding mask with NaN in every input's rows past the lengths
    (what an uninitialised buffer may hold; until 290f764 the kernels read those rows, and a
    masked 0 times NaN made the real rows' gradients NaN): O, Stats and every gradient finite
    and those of finite padding, bit for bit where the route is deterministic."""
    torch.manual_seed(7)
    b, hq, hk, sq, skv = 3, 4, 2, 130, 200
    q = torch.randn((b, hq, sq, d), device=DEV, dtype=torch.bfloat16)
    k, v = (torch.randn((b, hk, skv, d), device=DEV, dtype=torch.bfloat16) for _ in range(2))
    do = torch.randn_like(q)
    bias = 0.5 * torch.randn((b, hq, sq, skv), device=DEV, dtype=torch.bfloat16)
    seq_q = torch.tensor([130, 70, 9], dtype=torch.int32, device=DEV)
    seq_kv = torch.tensor([200, 100, 33], dtype=torch.int32, device=DEV)
    kw = dict(causal=True, seq_lens=(seq_q, seq_kv))
    nq, ndo = nan_past(q, seq_q), nan_past(do, seq_q)
    nk, nv = nan_past(k, seq_kv), nan_past(v, seq_kv)
    for with_bias in (False, True):
        extra = dict(bias=bias) if with_bias else {}
        o, stats = rime.sdpa(q, k, v, **kw, **extra)
        g = rime.sdpa_backward(q, k, v, o, do, stats, dbias=with_bias,
                               deterministic=deterministic, **kw, **extra)
        o2, stats2 = rime.sdpa(nq, nk, nv, **kw, **extra)
        assert torch.equal(o2, o) and torch.equal(stats2, stats), "forward"
        g2 = rime.sdpa_backward(nq, nk, nv, nan_past(o, seq_q), ndo, nan_past(stats, seq_q),
                                dbias=with_bias, deterministic=deterministic, **kw, **extra)
        for name in ("dq", "dk", "dv") + (("dbias",) if with_bias else ()):
            got, want = getattr(g2, name), getattr(g, name)
            assert torch.isfinite(got).all(), f"{name} bias={with_bias}"
            if deterministic:
                assert torch.equal(got, want), f"{name} bias={with_bias}"
            else:
                assert rel(got, want) <= 1e-2, f"{name} bias={with_bias}: {rel(got, want):.3g}"


@pytest.mark.parametrize("varlen", [False, True], ids=["dense", "varlen"])
def test_a_learned_sink_trains_through_attention(varlen):
    """rime.attention / attention_varlen with a sink that requires grad, on CUDA: the sink's
    gradient is the functional dSink in the sink's shape, bit for bit (deterministic), and a
    second run repeats it."""
    torch.manual_seed(8)
    h, d = 4, 64
    if varlen:
        cu = torch.tensor([0, 40, 41, 160], dtype=torch.int32, device=DEV)
        q = torch.randn((160, h, d), device=DEV, dtype=torch.bfloat16)
    else:
        q = torch.randn((2, h, 96, d), device=DEV, dtype=torch.bfloat16)
    k, v = torch.randn_like(q), torch.randn_like(q)
    sink = (torch.randn(h, device=DEV) + 1.0).requires_grad_()

    def run():
        leaves = [x.clone().requires_grad_() for x in (q, k, v)]
        sink.grad = None
        if varlen:
            o = rime.attention_varlen(*leaves, cu, cu, 119, 119, sink=sink, causal=True,
                                      deterministic=True)
        else:
            o = rime.attention(*leaves, sink=sink, causal=True, deterministic=True)
        o.float().square().sum().backward()
        return o.detach(), [x.grad for x in leaves] + [sink.grad.clone()]

    (o, grads), (_, again) = run(), run()
    do = (2 * o.float()).to(o.dtype)
    s = sink.detach()
    if varlen:
        _, stats = rime.sdpa_varlen(q, k, v, cu, cu, 119, 119, sink=s, causal=True)
        g = rime.sdpa_varlen_backward(q, k, v, o, do, stats, cu, cu, 119, 119, sink=s, dsink=True,
                                      causal=True, deterministic=True)
    else:
        _, stats = rime.sdpa(q, k, v, sink=s, causal=True)
        g = rime.sdpa_backward(q, k, v, o, do, stats, sink=s, dsink=True, causal=True,
                               deterministic=True)
    assert grads[3].shape == (h,) and grads[3].dtype == torch.float32
    for got, want, name in zip(grads, (g.dq, g.dk, g.dv, g.dsink.reshape(h)),
                               ("dq", "dk", "dv", "dsink")):
        assert torch.equal(got, want), name
    for x, y in zip(grads, again):
        assert torch.equal(x, y)


def test_bshd_and_packed_qkv_strides_run_in_place():
    torch.manual_seed(3)
    b, s, h, d = 2, 192, 4, 64
    qkv = torch.randn((b, s, 3, h, d), device=DEV, dtype=torch.bfloat16)
    q, k, v = (qkv[:, :, n].transpose(1, 2) for n in range(3))
    assert not q.is_contiguous()
    o, stats = rime.sdpa(q, k, v, causal=True)
    with sdpa_kernel(SDPBackend.MATH):
        want = F.scaled_dot_product_attention(q.double(), k.double(), v.double(), is_causal=True)
    assert rel(o, want) <= TOL[torch.bfloat16]
    g = rime.sdpa_backward(q, k, v, o, torch.ones_like(o), stats, causal=True)
    assert g.dq.shape == q.shape and torch.isfinite(g.dq).all()


def _step(q, k, v, bias):
    return rime.attention(q, k, v, bias=bias, causal=True).float().square().mean()


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_training_step_without_graph_breaks(backend):
    if backend == "inductor" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("inductor's Triton launcher needs a C compiler (cc); none is on PATH")
    torch._dynamo.reset()
    torch.manual_seed(4)
    shapes = [(2, 4, 256, 64)] * 3 + [(2, 4, 256, 256)]
    eager = [torch.randn(s, device=DEV, dtype=torch.bfloat16).requires_grad_() for s in shapes]
    compiled = [t.detach().clone().requires_grad_() for t in eager]
    step = torch.compile(_step, backend=backend, fullgraph=True)
    for params, fn in ((eager, _step), (compiled, step)):
        opt = torch.optim.SGD(params, lr=0.5)
        for _ in range(3):
            opt.zero_grad()
            fn(*params).backward()
            opt.step()
    for a, c in zip(eager, compiled):
        assert rel(c, a) <= 1e-2
    explained = torch._dynamo.explain(_step)(*compiled)
    assert explained.graph_break_count == 0


def test_work_on_a_non_default_stream_is_ordered():
    torch.manual_seed(5)
    shape = (2, 4, 1024, 128)
    src = [torch.randn(shape, device=DEV, dtype=torch.bfloat16) for _ in range(3)]
    with sdpa_kernel(SDPBackend.MATH):
        want = F.scaled_dot_product_attention(*(t.double() for t in src), is_causal=True)
    torch.cuda.synchronize()
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        q, k, v = (torch.zeros(shape, device=DEV, dtype=torch.bfloat16) for _ in range(3))
        torch.cuda._sleep(50_000_000)  # the copies below land long after this call returns
        for dst, s in zip((q, k, v), src):
            dst.copy_(s)
        o, stats = rime.sdpa(q, k, v, causal=True)
        doubled = o * 2  # queued after rime's kernels on the same stream
    assert torch.cuda.current_stream() != side
    side.synchronize()
    assert rel(o, want) <= TOL[torch.bfloat16]
    assert torch.equal(doubled, o * 2)


def test_the_default_stream_is_used_when_current():
    torch.manual_seed(6)
    q = torch.randn((1, 2, 256, 64), device=DEV, dtype=torch.float16)
    torch.cuda._sleep(20_000_000)
    o, _ = rime.sdpa(q, q, q)
    with sdpa_kernel(SDPBackend.MATH):
        want = F.scaled_dot_product_attention(q.double(), q.double(), q.double())
    assert rel(o, want) <= TOL[torch.float16]


def test_misaligned_tensors_name_the_argument():
    flat = torch.randn(2 * 128 * 64 + 1, device=DEV, dtype=torch.bfloat16)
    q = flat[1:].view(1, 2, 128, 64)  # 2 bytes past a 16-byte boundary
    k = torch.randn((1, 2, 128, 64), device=DEV, dtype=torch.bfloat16)
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q, k, k)
    assert e.value.argument == "q" and "multiple of 16" in str(e.value)


def test_a_misaligned_workspace_is_refused_before_any_kernel_runs():
    dims = [1, 2, 128, 64]
    g = rime.Graph(io_data_type=torch.bfloat16)
    q, k, v, o, do = (g.tensor(n, dims) for n in ("Q", "K", "V", "O", "dO"))
    stats = g.tensor("Stats", dims[:3] + [1], data_type="f32")
    dq, dk, dv, _, _ = g.sdpa_backward(q, k, v, o, do, stats)
    g.build_plans(target="cuda:0")
    x = {n: torch.randn(dims, device=DEV, dtype=torch.bfloat16) for n in ("Q", "K", "V", "dO")}
    x["O"], x["Stats"] = rime.sdpa(x["Q"], x["K"], x["V"])
    out = {t: torch.full(dims, 7.0, device=DEV, dtype=torch.bfloat16) for t in (dq, dk, dv)}
    assert g.get_workspace_size() > 0  # (else no workspace is checked)
    ws = torch.empty(g.get_workspace_size() + 8, device=DEV, dtype=torch.uint8)[8:]
    with pytest.raises(rime.TensorError) as e:
        g.execute({**x, **out}, workspace=ws)  # 8 bytes past a 16-byte boundary
    assert e.value.argument == "workspace" and "multiple of 16" in str(e.value)
    torch.cuda.synchronize()  # the context is intact: nothing faulted
    assert all(bool((t == 7.0).all()) for t in out.values())  # no output written


def test_mixed_devices_name_the_argument():
    q = torch.randn((1, 2, 128, 64), device=DEV, dtype=torch.bfloat16)
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q, q.cpu(), q)
    assert e.value.argument == "k" and "cuda:0" in str(e.value)


def test_a_head_dim_the_kernels_do_not_take_is_a_reason():
    q = torch.randn((1, 2, 128, 20), device=DEV, dtype=torch.bfloat16)
    with pytest.raises(rime.UnsupportedGraph) as e:
        rime.sdpa(q, q, q)
    assert "SMX001" in e.value.codes


def test_graph_api_executes_on_cuda_with_a_torch_workspace():
    torch.manual_seed(7)
    dims = [2, 4, 256, 64]
    g = rime.Graph(io_data_type=torch.bfloat16)
    names = ("Q", "K", "V", "O", "dO")
    q, k, v, o, do = (g.tensor(n, dims) for n in names)
    stats = g.tensor("Stats", dims[:3] + [1], data_type="f32")
    dq, dk, dv, _, _ = g.sdpa_backward(q, k, v, o, do, stats, use_causal_mask=True)
    g.build_plans(target="cuda:0")
    assert g.device == "cuda:0"
    x = {n: torch.randn(dims, device=DEV, dtype=torch.bfloat16) for n in ("Q", "K", "V", "dO")}
    x["O"], x["Stats"] = rime.sdpa(x["Q"], x["K"], x["V"], causal=True)
    out = {t: torch.empty(dims, device=DEV, dtype=torch.bfloat16) for t in (dq, dk, dv)}
    ws = torch.empty(g.get_workspace_size(), device=DEV, dtype=torch.uint8)
    g.execute({**x, **out}, workspace=ws)
    want = rime.sdpa_backward(x["Q"], x["K"], x["V"], x["O"], x["dO"], x["Stats"], causal=True)
    torch.cuda.synchronize()
    assert torch.allclose(out[dq].float(), want.dq.float(), atol=1e-2, rtol=1e-2)


@pytest.mark.parametrize("deterministic", [False, True], ids=["atomic", "det"])
def test_varlen_matches_the_cpu_engine(deterministic):
    lens = [300, 0, 77, 1, 512]
    cu = torch.tensor([0] + list(torch.tensor(lens).cumsum(0)), dtype=torch.int32)
    g = torch.Generator().manual_seed(5)
    t, h, d = int(cu[-1]), 4, 128
    qkv = torch.randn(t, 3, h, d, generator=g).to(torch.bfloat16)
    do = torch.randn(t, h, d, generator=g).to(torch.bfloat16)
    kw = dict(causal=True)
    results = []
    for device in ("cpu", DEV):
        x, dx, c = qkv.to(device), do.to(device), cu.to(device)
        q, k, v = x[:, 0], x[:, 1], x[:, 2]
        o, stats = rime.sdpa_varlen(q, k, v, c, c, max(lens), max(lens), **kw)
        grads = rime.sdpa_varlen_backward(q, k, v, o, dx, stats, c, c, max(lens), max(lens),
                                          deterministic=deterministic, **kw)
        results.append((o, stats, grads.dq, grads.dk, grads.dv))
    for name, cpu, gpu in zip(("o", "stats", "dq", "dk", "dv"), *results):
        assert rel(gpu.cpu(), cpu) <= TOL[torch.bfloat16], name
    if deterministic:
        q, k, v = (qkv.to(DEV)[:, i] for i in range(3))
        o, stats, c = results[1][0], results[1][1], cu.to(DEV)
        again = rime.sdpa_varlen_backward(q, k, v, o, do.to(DEV), stats, c, c, max(lens),
                                          max(lens), deterministic=True, **kw)
        for name, first, second in zip(("dq", "dk", "dv"), results[1][2:], again[:3]):
            assert torch.equal(first, second), name

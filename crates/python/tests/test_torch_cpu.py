"""PyTorch CPU tensors: the functional API in bfloat16 and float16, rime.attention's
gradients (custom ops and autograd.Function) against the float64 reference, the custom ops'
fake implementations (torch.library.opcheck), and torch.compile with no graph break."""

import shutil

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")

torch = pytest.importorskip("torch", reason="PyTorch is not installed (pip install torch)")

import rime  # noqa: E402
import reference as ref  # noqa: E402
from cases import Case, arrays, check_close, check_stats, reference  # noqa: E402

TOL = {torch.float16: 3e-3, torch.bfloat16: 2e-2}


def tensors(case, dtype, requires_grad=False):
    a = arrays(case, np.float16 if dtype == torch.float16 else np.float32)
    t = {}
    for name in ("q", "k", "v", "do"):
        x = torch.tensor(a[name], dtype=dtype)
        a[name] = x.double().numpy()  # the values as rounded to dtype
        t[name] = x.requires_grad_(requires_grad and name != "do")
    if "bias" in a:
        b = torch.tensor(a["bias"], dtype=dtype)
        a["bias"] = b.double().numpy()
        t["bias"] = b.requires_grad_(requires_grad)
    if "sink" in a:  # (Hq,) float32 logits, exact in float64
        t["sink"] = torch.tensor(a["sink"], dtype=torch.float32).requires_grad_(requires_grad)
    return a, t


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16], ids=["bf16", "f16"])
def test_functional_api_on_cpu_tensors(dtype):
    case = Case(b=2, hq=4, hk=2, causal=True, bias=(1, 4), dbias=True)
    a, t = tensors(case, dtype)
    o, stats = rime.sdpa(t["q"], t["k"], t["v"], causal=True, bias=t["bias"])
    assert o.dtype == dtype and o.device.type == "cpu" and stats.dtype == torch.float32
    want_o, want_lse, rkw = reference(case, a)
    check_close("O", o.double(), want_o, TOL[dtype])
    check_stats(stats.numpy(), want_lse)
    g = rime.sdpa_backward(t["q"], t["k"], t["v"], o, t["do"], stats, causal=True,
                           bias=t["bias"], dbias=True)
    dq, dk, dv, ds, _ = ref.backward(a["q"], a["k"], a["v"], o.double().numpy(), a["do"], **rkw)
    check_close("dQ", g.dq.double(), dq, TOL[dtype])
    check_close("dK", g.dk.double(), dk, TOL[dtype])
    check_close("dV", g.dv.double(), dv, TOL[dtype])
    check_close("dBias", g.dbias.double(), ref.reduce_like(ds, a["bias"].shape), TOL[dtype])


ATTENTION_CASES = [
    Case(b=2, hq=4, hk=2, causal=True, bias=(2, 4)),
    Case(hq=2, hk=1, sq=24, skv=40, causal=True, alignment="bottom_right"),
    Case(b=2, bias=(1, 1), window=(6, 3)),
    Case(layout="bshd"),
    Case(b=2, hq=4, hk=2, causal=True, sink=True),
]


def _grads_of(fn, t, case, kw):
    o = fn(t["q"], t["k"], t["v"], **kw)
    (o.double() * torch.tensor(arrays(case)["do"])).sum().backward()
    return o


@pytest.mark.parametrize("case", ATTENTION_CASES, ids=Case.id)
def test_attention_trains_against_the_reference(case):
    a, t = tensors(case, torch.float16, requires_grad=True)
    if case.layout == "bshd":
        for n in ("q", "k", "v"):
            t[n] = t[n].detach().transpose(1, 2).contiguous().transpose(1, 2).requires_grad_()
    kw = dict(causal=case.causal, causal_alignment=case.alignment, window=case.window,
              bias=t.get("bias"), sink=t.get("sink"))
    o = rime.attention(t["q"], t["k"], t["v"], **kw)
    loss = (o.double() * torch.tensor(a["do"])).sum()
    loss.backward()
    want_o, _, rkw = reference(case, a)
    check_close("O", o.detach().double(), want_o, 3e-3)
    dq, dk, dv, ds, dsink = ref.backward(a["q"], a["k"], a["v"], o.detach().double().numpy(),
                                         a["do"], **rkw)
    check_close("dQ", t["q"].grad.double(), dq, 3e-3)
    check_close("dK", t["k"].grad.double(), dk, 3e-3)
    check_close("dV", t["v"].grad.double(), dv, 3e-3)
    if case.bias:
        check_close("dBias", t["bias"].grad.double(), ref.reduce_like(ds, a["bias"].shape), 3e-3)
    if case.sink:
        assert t["sink"].grad.shape == t["sink"].shape and t["sink"].grad.dtype == torch.float32
        check_close("dSink", t["sink"].grad.double(), dsink, 3e-3)


@pytest.mark.parametrize("with_sink", [False, True], ids=["no-sink", "sink"])
def test_custom_ops_and_autograd_function_agree_bitwise(with_sink):
    case = Case(b=2, hq=2, causal=True, bias=(2, 2), sink=with_sink)
    names = ("q", "k", "v", "bias") + (("sink",) if with_sink else ())
    grads = []
    for use_function in (False, True):
        _, t = tensors(case, torch.bfloat16, requires_grad=True)
        sink = t.get("sink")
        args = (t["q"], t["k"], t["v"], t["bias"], sink, None, None, None, None, 0, False, False,
                False)
        o = rime.AttentionFunction.apply(*args) if use_function else rime.attention(
            t["q"], t["k"], t["v"], bias=t["bias"], sink=sink, causal=True)
        o.float().pow(2).sum().backward()
        grads.append([o.detach()] + [t[n].grad for n in names])
    for x, y in zip(*grads):
        assert torch.equal(x, y)


def test_sink_gradient_is_the_functional_dsink_and_none_when_frozen():
    case = Case(b=2, hq=4, hk=2, sink=True)
    _, t = tensors(case, torch.bfloat16, requires_grad=True)
    o = rime.attention(t["q"], t["k"], t["v"], sink=t["sink"])
    o.float().pow(2).sum().backward()
    x = {n: t[n].detach() for n in ("q", "k", "v")}
    o2, stats = rime.sdpa(x["q"], x["k"], x["v"], sink=t["sink"].detach())
    do = (2 * o2.float()).to(o2.dtype)
    g = rime.sdpa_backward(x["q"], x["k"], x["v"], o2, do, stats, sink=t["sink"].detach(),
                           dsink=True)
    assert torch.equal(t["sink"].grad, g.dsink.reshape(-1))
    _, t = tensors(case, torch.bfloat16, requires_grad=True)
    t["sink"].requires_grad_(False)
    rime.attention(t["q"], t["k"], t["v"], sink=t["sink"]).float().sum().backward()
    assert t["sink"].grad is None and t["q"].grad is not None


def test_no_bias_gradient_when_the_bias_is_frozen():
    case = Case(b=1, bias=(1, 2))
    _, t = tensors(case, torch.float16, requires_grad=True)
    t["bias"].requires_grad_(False)
    o = rime.attention(t["q"], t["k"], t["v"], bias=t["bias"])
    o.float().sum().backward()  # a broadcast (stride 0) incoming gradient
    assert t["bias"].grad is None and t["q"].grad is not None


def test_fake_implementations_agree_with_the_real_ops():
    case = Case(b=2, hq=4, hk=2, bias=(1, 4))
    _, t = tensors(case, torch.bfloat16)
    sink = torch.linspace(-1.0, 1.0, case.hq)
    for s in (None, sink):
        fwd_args = (t["q"], t["k"], t["v"], t["bias"], s, None, None, 0.25, None, 0, False, False,
                    False)
        torch.library.opcheck(torch.ops.rime.attention_forward.default, fwd_args)
        o, stats = torch.ops.rime.attention_forward(*fwd_args)
        bwd_args = (t["do"], t["q"], t["k"], t["v"], o, stats, t["bias"], s, None, None, 0.25,
                    None, 0, False, False, True, s is not None, False)
        torch.library.opcheck(torch.ops.rime.attention_backward.default, bwd_args)


def _train_step(model_fn, t, steps=2):
    params = [t[n] for n in ("q", "k", "v", "bias")]
    opt = torch.optim.SGD(params, lr=0.1)
    losses = []
    for _ in range(steps):
        opt.zero_grad()
        loss = model_fn(*params).float().pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    return losses, [p.detach().clone() for p in params]


def _attention_step(q, k, v, bias):
    return rime.attention(q, k, v, bias=bias, causal=True)


@pytest.mark.parametrize("backend", ["aot_eager", "inductor"])
def test_torch_compile_training_step_has_no_graph_break(backend):
    if backend == "inductor" and shutil.which("cc") is None and shutil.which("gcc") is None:
        pytest.skip("inductor needs a C compiler (cc) on the CPU; none is on PATH")
    torch._dynamo.reset()
    case = Case(b=2, hq=2, causal=True, bias=(2, 2))
    _, eager_t = tensors(case, torch.bfloat16, requires_grad=True)
    _, compiled_t = tensors(case, torch.bfloat16, requires_grad=True)
    eager_losses, eager_params = _train_step(_attention_step, eager_t)
    compiled = torch.compile(_attention_step, backend=backend, fullgraph=True)
    compiled_losses, compiled_params = _train_step(compiled, compiled_t)
    assert np.allclose(eager_losses, compiled_losses, rtol=1e-2)
    for a, b in zip(eager_params, compiled_params):
        assert torch.allclose(a.float(), b.float(), atol=2e-2, rtol=2e-2)
    explanation = torch._dynamo.explain(_attention_step)(*[compiled_t[n] for n in ("q", "k", "v", "bias")])
    assert explanation.graph_break_count == 0 and explanation.graph_count == 1


def test_numpy_and_torch_cpu_inputs_mix_as_host_memory():
    case = Case()
    a, t = tensors(case, torch.float16)
    o, _ = rime.sdpa(t["q"], t["k"].numpy(), t["v"])
    check_close("O", o.double(), reference(case, a)[0], 3e-3)


def test_meta_tensors_are_refused_naming_the_argument():
    q = torch.empty((1, 2, 16, 16), dtype=torch.float16, device="meta")
    k = torch.empty((1, 2, 16, 16), dtype=torch.float16)
    with pytest.raises(rime.TensorError) as e:
        rime.sdpa(q, k, k)
    assert e.value.argument == "q" and "meta" in str(e.value)


def test_sparse_tensors_are_refused_naming_the_argument():
    k = torch.randn((1, 2, 16, 16), dtype=torch.float16)
    for sparse in (k.to_sparse(), k.to_sparse_csr() if hasattr(k, "to_sparse_csr") else None):
        if sparse is None:
            continue
        with pytest.raises(rime.TensorError) as e:
            rime.sdpa(k, sparse, k)
        assert e.value.argument == "k" and "strided" in str(e.value)


def test_graph_takes_torch_and_numpy_dtypes_and_torch_tensors():
    g = rime.Graph(io_data_type=torch.bfloat16, intermediate_data_type=np.float32)
    q = torch.randn((1, 2, 16, 16), dtype=torch.bfloat16)
    tq = g.tensor_like(q, "Q")
    assert tq.data_type == "bf16" and tq.dim == [1, 2, 16, 16] and tq.stride == list(q.stride())
    k, v = g.tensor("K", [1, 2, 16, 16]), g.tensor("V", [1, 2, 16, 16], data_type=torch.bfloat16)
    o, stats = g.sdpa(tq, k, v, use_causal_mask=True)
    g.build_plans(target="cpu")
    out = {o: torch.empty_like(q), stats: torch.empty((1, 2, 16, 1))}
    g.execute({tq: q, "K": q, "V": q, **out})
    want, want_stats = rime.sdpa(q, q, q, causal=True)
    assert torch.equal(out[o], want) and torch.equal(out[stats], want_stats)
    with pytest.raises(TypeError, match="io_data_type"):
        rime.Graph(io_data_type="half-ish")

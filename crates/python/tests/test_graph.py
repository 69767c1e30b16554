"""The Graph API (cuDNN frontend names): building, validate, check with reasons, heuristics,
build_plans, execute with a dict of arrays, JSON, against the float64 reference."""

import os

import pytest

np = pytest.importorskip("numpy", reason="numpy is not installed (pip install numpy)")

import rime
import reference as ref

FIXTURES = os.path.join(os.path.dirname(__file__), "..", "..", "..", "tests", "fixtures")


def backward_graph(b=1, h=2, s=24, d=16, causal=True, bias=False):
    g = rime.Graph(io_data_type="f16")
    dims = [b, h, s, d]
    q, k, v, o, do = (g.tensor(n, dims) for n in ("Q", "K", "V", "O", "dO"))
    stats = g.tensor("Stats", [b, h, s, 1], data_type="f32")
    bias_t = g.tensor("Bias", [1, h, s, s]) if bias else None
    dq, dk, dv, dbias, dsink = g.sdpa_backward(
        q, k, v, o, do, stats, use_causal_mask=causal, bias=bias_t, dBias=bias
    )
    return g, dict(q=q, k=k, v=v, o=o, do=do, stats=stats, bias=bias_t, dq=dq, dk=dk, dv=dv,
                   dbias=dbias, dsink=dsink)


def test_builder_returns_handles_with_cudnn_style_setters():
    g, t = backward_graph()
    assert t["dq"].dim == [1, 2, 24, 16] and t["dq"].data_type == "f16"
    assert t["stats"].data_type == "f32" and t["dsink"] is None and t["dbias"] is None
    assert t["q"].set_uid(7).uid == 7
    t["dq"].set_name("dQ").set_output(True)
    assert t["dq"].name == "dQ" and not t["dq"].is_virtual
    assert t["q"] == g.tensors[0] and hash(t["q"]) == hash(g.tensors[0])
    g.validate()
    g.build_operation_graph()


def test_check_reports_every_configuration_with_reason_objects():
    g, _ = backward_graph(s=24, d=20)  # head dim 20 is not a multiple of 8: SMX001 on sm120
    report = g.check(target="rtx-5090")
    assert report.target == "rtx-5090"
    assert "cpu_reference" in report.supported_engines and not report.supports("sm120")
    codes = {r.code for r in report.reasons}
    assert "SMX001" in codes, codes
    sm120 = [c for c in report.configs if c["engine"] == "sm120"]
    assert sm120 and all(c["verdict"] == "rejected" and c["workspace_bytes"] is None for c in sm120)
    assert all(r.config.startswith("sm120") for c in sm120 for r in c["reasons"])
    assert "SMX001" in str(report) and '"format": "rime.report"' in report.to_json()
    g.check_support(target="cpu")  # the CPU reference takes it
    g.check_support(target="rtx-5090")  # a profile: some engine (the CPU reference) takes it
    assert g.heuristics(target="rtx-5090", pin="sm120") == []


def test_check_support_raises_with_the_reasons_of_every_engine():
    g = rime.Graph(io_data_type="f16")
    q = g.tensor("Q", [1, 2, 32, 16])
    k = g.tensor("K", [1, 2, 16, 16])
    o, stats = g.sdpa(q, k, k, use_causal_mask_bottom_right=True)
    with pytest.raises(rime.UnsupportedGraph) as e:
        g.check_support(target="cpu")
    assert e.value.reasons and e.value.reasons[0].config is None
    with pytest.raises(rime.UnsupportedGraph):
        g.build_plans(target="cpu")


def test_heuristics_rank_sm120_routes_on_a_gpu_profile_without_a_gpu():
    g, _ = backward_graph(s=256, d=64)
    ranked = g.heuristics(target="rtx-pro-6000")
    assert [c.rank for c in ranked] == list(range(1, len(ranked) + 1))
    assert ranked[0].engine == "sm120" and ranked[-1].engine == "cpu_reference"
    assert {c.route for c in ranked if c.engine == "sm120"} >= {"atomic", "relay"}
    assert all(c.workspace_bytes > 0 for c in ranked if c.engine == "sm120")
    only = g.heuristics(target="rtx-pro-6000", pin="sm120/relay")
    assert {c.config for c in only} == {"sm120/relay"}
    fewest = g.create_execution_plans(["b"], target="rtx-pro-6000")
    # Mode b: smallest workspace first (the CPU reference stays last on a GPU target).
    assert fewest[0].workspace_bytes == min(c.workspace_bytes for c in ranked if c.engine == "sm120")


def test_unknown_pins_and_deselections_are_errors():
    g, _ = backward_graph()
    with pytest.raises(ValueError, match="pin: no engine configuration is called `sm120/atomc`; known: cpu_reference, sm120, sm120/atomic"):
        g.heuristics(target="rtx-5090", pin="sm120/atomc")
    with pytest.raises(ValueError, match="deselect: no engine configuration is called `cudnn`"):
        g.heuristics(target="rtx-5090", deselect=["cudnn"])
    with pytest.raises(ValueError, match="pin: no engine configuration is called `cpu_referencex`"):
        g.build_plans(target="cpu", pin="cpu_referencex")
    assert g.heuristics(target="rtx-5090", deselect=["sm120/atomic"])


def test_build_plans_refuses_profiles_and_foreign_pins():
    g, _ = backward_graph()
    with pytest.raises(ValueError, match="profile"):
        g.build_plans(target="h200")
    with pytest.raises(ValueError, match="pin"):
        g.build_plans(target="cpu", pin="sm120/relay")
    with pytest.raises(ValueError, match="build_plans"):
        g.get_workspace_size()


def _pack(t, arrays):
    return {t[n]: arrays[n] for n in arrays}


def test_execute_matches_the_reference_with_any_key_kind():
    rng = np.random.default_rng(3)
    g, t = backward_graph(bias=True)
    t["q"].set_uid(101)
    a = {n: rng.standard_normal((1, 2, 24, 16)).astype(np.float16) for n in ("q", "k", "v", "do")}
    bias = (rng.standard_normal((1, 2, 24, 24)) * 0.5).astype(np.float16)
    f = {n: a[n].astype(np.float64) for n in a}
    o, lse, _ = ref.forward(f["q"], f["k"], f["v"], bias=bias.astype(np.float64), right=0)
    o16 = o.astype(np.float16)
    dq, dk, dv, ds, _ = ref.backward(f["q"], f["k"], f["v"], o16.astype(np.float64), f["do"],
                                     bias=bias.astype(np.float64), right=0)
    out = {n: np.zeros((1, 2, 24, 16), np.float16) for n in ("dq", "dk", "dv")}
    out["dbias"] = np.zeros((1, 2, 24, 24), np.float16)
    g.build_plans(target="cpu")
    assert g.device == "cpu" and g.get_workspace_size() == 0
    pack = {101: a["q"], "K": a["k"], t["v"]: a["v"], t["o"]: o16, "dO": a["do"],
            t["stats"]: lse.astype(np.float32), t["bias"]: bias}
    pack.update({t[n]: out[n] for n in out})
    g.execute(pack)
    assert ref.rel_err(out["dq"], dq) < 3e-3
    assert ref.rel_err(out["dk"], dk) < 3e-3
    assert ref.rel_err(out["dv"], dv) < 3e-3
    assert ref.rel_err(out["dbias"], ds) < 3e-3


def _full_pack(t, shape=(1, 2, 24, 16)):
    pack = {t[n]: np.ones(shape, np.float16) * 0.1 for n in ("q", "k", "v", "o", "do", "dq", "dk", "dv")}
    pack[t["stats"]] = np.zeros(shape[:3] + (1,), np.float32)
    return pack


def test_execute_refuses_bad_variant_packs_naming_the_tensor():
    g, t = backward_graph()
    g.build_plans(target="cpu")
    pack = _full_pack(t)
    pack[t["k"]] = np.ones((1, 2, 24, 8), np.float16)
    with pytest.raises(rime.TensorError) as e:
        g.execute(pack)
    assert e.value.argument == "K" and "declares" in str(e.value)
    pack = _full_pack(t)
    del pack[t["dv"]]
    with pytest.raises(rime.TensorError) as e:
        g.execute(pack)
    assert e.value.argument.endswith("dV")
    pack = _full_pack(t)
    pack[t["stats"]] = pack[t["stats"]].astype(np.float16)
    with pytest.raises(rime.TensorError) as e:
        g.execute(pack)
    assert e.value.argument == "Stats"
    with pytest.raises(ValueError, match="no tensor named"):
        g.execute({"nope": np.zeros(1)})


def test_outputs_sharing_memory_are_refused_and_nothing_is_written():
    g, t = backward_graph()
    g.build_plans(target="cpu")
    pack = _full_pack(t)
    shared = np.full((1, 2, 24, 16), 7, np.float16)
    pack[t["dq"]] = shared
    pack[t["dk"]] = shared[:]  # a view of the same memory
    with pytest.raises(rime.TensorError) as e:
        g.execute(pack)
    assert "overlaps" in str(e.value)
    assert np.all(shared == 7)


def test_read_only_outputs_are_refused():
    g, t = backward_graph()
    g.build_plans(target="cpu")
    pack = _full_pack(t)
    pack[t["dq"]].setflags(write=False)
    with pytest.raises(rime.TensorError) as e:
        g.execute(pack)
    assert "read-only" in str(e.value)


def test_json_round_trip_and_fixture_files():
    g, _ = backward_graph(bias=True)
    text = g.to_json()
    again = rime.Graph.from_json(text)
    assert again.to_json() == text
    loaded = rime.Graph.load(os.path.join(FIXTURES, "valid", "bwd_fp16.json"))
    assert loaded.check(target="rtx-5090").supports("sm120")
    with pytest.raises(rime.GraphError) as e:
        rime.Graph.from_json('{"format": "rime.graph", "version": 1, "tensors": 3}', "bad.json")
    assert "bad.json" in str(e.value) and e.value.errors


def test_cudnn_frontend_dumps_load():
    path = os.path.join(FIXTURES, "cudnn", "sdpa_bwd_frontend_dropout_bias.json")
    with open(path) as f:
        g = rime.Graph.from_cudnn_json(f.read(), path)
    codes = {r.code for r in g.check(target="rtx-5090").reasons}
    assert codes, "the dropout graph is rejected by sm120 with reasons"
    # Graph.load tells a real frontend dump from a rime file by its keys.
    real = os.path.join(FIXTURES, "cudnn", "real", "bwd_gqa_4_2.build_plans.json")
    with open(real) as f:
        text = f.read()
    with pytest.raises(rime.GraphError):
        rime.Graph.from_json(text, real)  # not rime's format
    assert rime.Graph.load(real).to_json() == rime.Graph.from_cudnn_json(text, real).to_json()
    assert rime.Graph.load(real).check(target="rtx-5090").supports("sm120")


def test_validate_lists_every_problem():
    g = rime.Graph(io_data_type="bf16")
    q = g.tensor("Q", [1, 2, 16, 16])
    k = g.tensor("K", [1, 2, 16, 8])
    v = g.tensor("V", [1, 2, 16, 16])
    g.sdpa(q, k, v)
    with pytest.raises(rime.GraphError) as e:
        g.validate()
    assert e.value.errors


def test_forward_and_backward_nodes_run_in_order_with_virtual_intermediates():
    rng = np.random.default_rng(4)
    g = rime.Graph(io_data_type="f16")
    dims = [1, 2, 20, 16]
    q, k, v, do = (g.tensor(n, dims) for n in ("Q", "K", "V", "dO"))
    o, stats = g.sdpa(q, k, v, use_causal_mask=True)
    o.set_output(False).set_data_type("f16")  # a virtual tensor takes the intermediate type otherwise
    stats.set_output(False)
    dq, dk, dv, _, _ = g.sdpa_backward(q, k, v, o, do, stats, use_causal_mask=True)
    a = {n: rng.standard_normal(dims).astype(np.float16) for n in ("Q", "K", "V", "dO")}
    out = {n: np.zeros(dims, np.float16) for n in ("dq", "dk", "dv")}
    g.execute({**a, dq: out["dq"], dk: out["dk"], dv: out["dv"]})
    assert g.device == "cpu", "numpy arrays run where they are, even on a GPU machine"
    f = {n: a[n].astype(np.float64) for n in a}
    o_ref, _, _ = ref.forward(f["Q"], f["K"], f["V"], right=0)
    want = ref.backward(f["Q"], f["K"], f["V"], o_ref.astype(np.float16).astype(np.float64),
                        f["dO"], right=0)
    assert ref.rel_err(out["dq"], want[0]) < 3e-3
    assert ref.rel_err(out["dv"], want[2]) < 3e-3

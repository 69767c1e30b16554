"""Host overhead of rime's Python API per call, warm plan cache, against the engine's own
per-call cost in the same process on the same tensors (see docs/performance.md, "Python host
overhead", and benches/host_costs.rs, whose `sm120_tiny_b1h1s64d128/enqueue` this mirrors).

The problem is host_costs.rs's tiny backward: B1 H1 S64 D128 bf16, causal, per-batch bias
with dBias, non-deterministic (the atomic route on sm120). For each of forward and backward:

- python: ``rime.sdpa`` / ``rime.sdpa_backward`` per call: read and check the tensors, find
  the plan, allocate the outputs and workspace from PyTorch, stage and enqueue on PyTorch's
  current stream (no synchronize);
- engine: the same call staged once, then only the engine's execute (check the variant pack
  and enqueue the kernels), via ``rime._native.time_engine_calls``.

Every call is timed alone (``time.perf_counter_ns``); the stream is drained every 64 calls
outside the timed region. The breakdown says where a call's time goes: the outputs allocated
from Python, the native call's phases (``rime._native.time_call_phases``: read the tensors and
find the plan, stage, launch, finish) and the rest of the Python wrapper (medians, so the parts
need not add up exactly). Writes ``host_overhead.json`` to ``--out``.

    python crates/python/benches/host_overhead.py --device cuda --out DIR
"""

import argparse
import json
import os
import platform
import statistics
import time

import rime

DRAIN = 64


def summary(seconds):
    us = sorted(s * 1e6 for s in seconds)
    q = statistics.quantiles(us, n=10)
    return {"median_us": statistics.median(us), "p10_us": q[0], "p90_us": q[-1],
            "mean_us": statistics.fmean(us), "calls": len(us)}


def python_calls(fn, iters, sync):
    times = []
    for i in range(iters):
        if i % DRAIN == 0:
            sync()
        t0 = time.perf_counter_ns()
        fn()
        times.append((time.perf_counter_ns() - t0) * 1e-9)
    sync()
    return times


def problem(device):
    import torch

    torch.manual_seed(0)
    dtype = torch.bfloat16
    shape = (1, 1, 64, 128)
    q, k, v, do = (torch.randn(shape, dtype=dtype, device=device) for _ in range(4))
    bias = torch.randn((1, 1, 64, 64), dtype=dtype, device=device)
    return q, k, v, do, bias


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    parser.add_argument("--iters", type=int, default=2000)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()

    import torch

    device = torch.device(args.device)
    sync = torch.cuda.synchronize if device.type == "cuda" else (lambda: None)
    q, k, v, do, bias = problem(device)
    o, stats = rime.sdpa(q, k, v, causal=True, bias=bias)
    rows = {}
    fwd_in = [("q", q), ("k", k), ("v", v), ("bias", bias)]
    fwd_out = list(zip(("o", "stats"), rime.functional.forward_outputs(q, v)))
    bwd_in = [("q", q), ("k", k), ("v", v), ("o", o), ("do", do), ("stats", stats),
              ("bias", bias)]
    bwd_out = [(n_, t) for n_, t in zip(("dq", "dk", "dv", "dbias"),
                                        rime.functional.backward_outputs(q, k, v, bias))]
    for name, fn, allocate, backward, ins, outs in (
        ("forward", lambda: rime.sdpa(q, k, v, causal=True, bias=bias),
         lambda: rime.functional.forward_outputs(q, v), False, fwd_in, fwd_out),
        ("backward",
         lambda: rime.sdpa_backward(q, k, v, o, do, stats, causal=True, bias=bias, dbias=True),
         lambda: rime.functional.backward_outputs(q, k, v, bias), True, bwd_in, bwd_out),
    ):
        def native(n):
            return rime._native.time_engine_calls(n, backward, ins, outs, right_bound=0)

        def phases(n):
            return rime._native.time_call_phases(n, backward, ins, outs, right_bound=0)

        python_calls(fn, 50, sync)  # warm: plans built, caches hot
        native(50)
        phases(50)
        py = summary(python_calls(fn, args.iters, sync))
        eng = summary(native(args.iters))
        # Where the overhead goes: the outputs allocated from Python, then the native call's
        # phases (read the tensors and find the plan; variant pack, workspace and stream;
        # the engine's execute; release), medians of each.
        alloc = summary(python_calls(allocate, args.iters, sync))
        split = phases(args.iters)
        parts = {"allocate_outputs": alloc["median_us"]}
        for i, part in enumerate(("read_and_find_plan", "stage", "launch", "finish")):
            parts[part] = statistics.median(t[i] for t in split) * 1e6
        parts["python_rest"] = py["median_us"] - sum(parts.values())
        rows[name] = {"python": py, "engine": eng,
                      "overhead_median_us": py["median_us"] - eng["median_us"],
                      "breakdown_median_us": parts}

    result = {
        "bench": "rime python host overhead",
        "problem": "B1 H1 S64 D128 bf16, causal, per-batch bias (1,1,64,64), dBias on the backward",
        "device": torch.cuda.get_device_name(device) if device.type == "cuda" else platform.processor() or "cpu",
        "torch": torch.__version__,
        "rime": rime.__version__,
        "python": platform.python_version(),
        "iters": args.iters,
        "drain_every": DRAIN,
        "plan_cache": rime.plan_cache_info(),
        "criterion_us": 30.0,
        "results": rows,
        "passes": all(r["overhead_median_us"] <= 30.0 for r in rows.values()),
        "when": time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()),
    }
    os.makedirs(args.out, exist_ok=True)
    path = os.path.join(args.out, "host_overhead.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=2)
    for name, r in rows.items():
        print(f"{name}: python {r['python']['median_us']:.1f} us, engine "
              f"{r['engine']['median_us']:.1f} us, overhead {r['overhead_median_us']:.1f} us")
        print("  " + ", ".join(f"{k} {v:.1f}" for k, v in r["breakdown_median_us"].items()))
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

"""Multi-process runs of ``rime.distributed`` for the tests (test_distributed.py) and the GPU
script (gpu_distributed_check.sh): the cases, the per-rank program, and the launcher.

``run(world_size, out_dir, backend)`` starts ``world_size`` processes of this file (gloo: CPU
tensors and rime's CPU engine; nccl: one CUDA device per rank and the sm120 engine), each of
which joins one ``torch.distributed`` group through a file store in ``out_dir``, runs every
case on every partition of the ranks into groups, and saves its shards of the results to
``out_dir/rank{N}.pt``. A process that does not finish in time is killed and the run fails.
"""

import os
import subprocess
import sys
import time
from dataclasses import dataclass

from cases import Case, arrays


@dataclass(frozen=True)
class DCase:
    """A case of the whole problem (``case``: global sizes and options), sharded in
    ``layout``; ``subgroups``: also run on the ranks split into groups (pairs, singletons)."""

    name: str
    case: Case
    layout: str = "zigzag"
    subgroups: bool = False


S = 64  # chunks of 8 rows at 4 ranks in zigzag (16-byte aligned slices on CUDA at d >= 8)

CASES = [
    DCase("plain-contiguous", Case(b=2, hq=2, hk=2, sq=S, skv=S, d=32, dv=32), "contiguous",
          subgroups=True),
    DCase("causal-zigzag-gqa", Case(hq=4, hk=2, sq=S, skv=S, d=32, dv=32, causal=True),
          subgroups=True),
    DCase("causal-contiguous", Case(sq=S, skv=S, d=32, dv=32, causal=True), "contiguous"),
    DCase("causal-zigzag-bias-per-batch-dbias",
          Case(b=2, sq=S, skv=S, d=32, dv=32, causal=True, bias=(2, 2), dbias=True, seed=3),
          subgroups=True),
    DCase("window-zigzag-broadcast-bias-dbias-dv16-scale",
          Case(sq=S, skv=S, d=32, dv=16, window=(12, 5), bias=(1, 1), dbias=True, scale=0.3,
               seed=4)),
    DCase("sliding-window-causal-zigzag-bshd",
          Case(hq=2, hk=1, sq=S, skv=S, d=32, dv=32, causal=True, window=(20, 0),
               layout="bshd", seed=5)),
    DCase("cross-bottom-right-contiguous-mqa",
          Case(hq=2, hk=1, sq=S, skv=2 * S, d=32, dv=32, causal=True, alignment="bottom_right",
               seed=6), "contiguous"),
    DCase("deterministic-causal-zigzag-bias-dbias",
          Case(hq=2, hk=2, sq=S, skv=S, d=32, dv=32, causal=True, bias=(1, 2), dbias=True,
               deterministic=True, seed=7), subgroups=True),
]

# Calls every rank must refuse before sending anything: (name, case, what to break).
ERROR_CASES = [
    ("bias-bottom-right", Case(sq=S, skv=2 * S, d=32, dv=32, causal=True,
                               alignment="bottom_right", bias=(1, 1)), None),
    ("bias-wrong-rows", Case(sq=S, skv=S, d=32, dv=32, bias=(1, 1)), "bias-rows"),
]


def options(case):
    """The keyword options of rime.attention / rime.distributed.attention for ``case``."""
    return dict(causal=case.causal, causal_alignment=case.alignment, window=case.window,
                scale=case.scale)


def global_tensors(case, device):
    """The whole problem's q, k, v, do (and bias) as float16 tensors on ``device``."""
    import torch

    a = arrays(case)
    names = ["q", "k", "v", "do"] + (["bias"] if case.bias else [])
    return {n: torch.tensor(a[n], dtype=torch.float16, device=device) for n in names}


def _memory_layout(x, layout):
    """``x`` with the case's memory layout: BSHD strides for "bshd"."""
    if layout == "bshd":
        return x.transpose(1, 2).contiguous().transpose(1, 2)
    return x


def _run_case(dc, group, rank, world, device):
    import rime.distributed as rd

    case = dc.case
    g = global_tensors(case, device)
    local = {n: rd.shard(x, rank, world, layout=dc.layout) for n, x in g.items()}
    for n in ("q", "k", "v", "do"):
        local[n] = _memory_layout(local[n], case.layout)
    kw = dict(options(case), group=group, layout=dc.layout)
    o, stats = rd.sdpa(local["q"], local["k"], local["v"], bias=local.get("bias"), **kw)
    out = {"sdpa_o": o, "stats": stats, "runs": []}
    for _ in range(2):
        leaves = {n: local[n].detach().clone().requires_grad_(n != "bias" or case.dbias)
                  for n in ("q", "k", "v", "bias") if n in local}
        ob = rd.attention(leaves["q"], leaves["k"], leaves["v"], bias=leaves.get("bias"),
                          deterministic=case.deterministic, **kw)
        ob.backward(local["do"])
        run = {"o": ob.detach()}
        for n, t in leaves.items():
            run["d" + n] = t.grad
        out["runs"].append(run)
    return _to_cpu(out)


def _to_cpu(x):
    if isinstance(x, dict):
        return {k: _to_cpu(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_to_cpu(v) for v in x]
    return None if x is None else x.detach().cpu()


def _run_error(case, breaks, rank, world, device):
    import rime.distributed as rd

    g = global_tensors(case, device)
    local = {n: rd.shard(x, rank, world) for n, x in g.items()}
    if breaks == "bias-rows":
        local["bias"] = g["bias"]  # every query row instead of this rank's
    try:
        rd.attention(local["q"], local["k"], local["v"], bias=local.get("bias"), **options(case))
    except Exception as e:  # noqa: BLE001 - the test compares what each rank raised
        return (type(e).__name__, tuple(getattr(e, "codes", ()) or ()),
                getattr(e, "argument", None), str(e))
    return None


def partitions(world):
    """The splits of the ranks into groups each case runs on: the whole world (as the
    default group, None), then for subgroup cases pairs (4 ranks) or singletons (2 ranks)."""
    size = 2 if world == 4 else 1
    return [[list(range(world))], [list(range(i, i + size)) for i in range(0, world, size)]]


def worker(out_dir, rank, world, backend):
    """One rank: every case on every partition, results to ``out_dir/rank{rank}.pt``."""
    from datetime import timedelta

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    device = torch.device("cpu")
    if backend == "nccl":
        device = torch.device("cuda", rank)
        torch.cuda.set_device(device)
    dist.init_process_group(backend, init_method=f"file://{out_dir}/store", rank=rank,
                            world_size=world, timeout=timedelta(seconds=120))
    results = {}
    for pi, part in enumerate(partitions(world)):
        groups = [None] if pi == 0 else [dist.new_group(ranks) for ranks in part]
        gi = next(i for i, ranks in enumerate(part) if rank in ranks)
        ranks = part[gi]
        for dc in CASES:
            if pi == 0 or dc.subgroups:
                results[(pi, gi, dc.name)] = _run_case(dc, groups[gi], ranks.index(rank),
                                                       len(ranks), device)
    for name, case, breaks in ERROR_CASES:
        results[("error", name)] = _run_error(case, breaks, rank, world, device)
    dist.barrier()
    dist.destroy_process_group()
    with open(os.path.join(out_dir, f"rank{rank}.pt"), "wb") as f:
        torch.save(results, f)


def run(world, out_dir, backend="gloo", timeout=300):
    """Runs ``world`` ranks; returns the list of each rank's results (index: rank)."""
    import torch

    os.makedirs(out_dir, exist_ok=True)
    env = dict(os.environ, RAYON_NUM_THREADS="1", OMP_NUM_THREADS="1")
    here = os.path.dirname(os.path.abspath(__file__))
    procs = [
        subprocess.Popen([sys.executable, os.path.join(here, "distributed_run.py"), out_dir,
                          str(r), str(world), backend], env=env, cwd=here,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        for r in range(world)
    ]
    deadline = time.monotonic() + timeout
    logs = []
    try:
        for p in procs:
            left = max(1.0, deadline - time.monotonic())
            logs.append(p.communicate(timeout=left)[0].decode(errors="replace"))
    except subprocess.TimeoutExpired:
        for p in procs:
            if p.poll() is None:
                p.kill()
        for p in procs:
            p.wait()
        raise RuntimeError(f"{world} ranks did not finish in {timeout} s")
    failed = [(r, p.returncode, log[-3000:]) for r, (p, log) in enumerate(zip(procs, logs))
              if p.returncode != 0]
    if failed:
        raise RuntimeError("ranks failed:\n" + "\n".join(
            f"--- rank {r} (exit {code}):\n{log}" for r, code, log in failed))
    out = []
    for r in range(world):
        with open(os.path.join(out_dir, f"rank{r}.pt"), "rb") as f:
            out.append(torch.load(f))
    return out


if __name__ == "__main__":
    worker(sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4])

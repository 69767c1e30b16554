"""Context-parallel scaling of rime.distributed on CUDA with NCCL (docs/distributed.md,
"Measurements"). NOT YET RUN: written for a 2-GPU machine (kind nvidia-h200-x2) that was not
available; crates/python/gpu_distributed_check.sh runs it.

Launch with torchrun, one process per GPU:

    python -m torch.distributed.run --standalone --nproc-per-node N \\
        benches/distributed_scaling.py --out DIR [--seq 32768,65536,131072]

For each global sequence length S (B=1, H=8, D=128, bf16, causal, zigzag) it times, per step
(median of --repeats after a warm-up that builds the plans):

- ``ring``: rime.distributed.sdpa (forward) and sdpa_backward on S / N rows per rank;
- ``compute``: the same rime block calls (``block_calls`` of every ring step) on local data,
  with no messages;
- ``comm``: the ring's messages alone (N - 1 shifts of the key / value shard, N of the float32
  dK / dV accumulator, as the backward sends them);
- overlap: the share of ``comm`` hidden behind compute, (compute + comm - ring) / comm,
  clamped to [0, 1];
- with N = 1 also rime.attention's forward + backward and PyTorch's own
  scaled_dot_product_attention (its default CUDA backend) on the whole sequence, the
  single-GPU references the 2-GPU times are compared with.

Rank 0 prints a table and writes DIR/distributed_scaling_w{N}.json. ``--device cpu`` (gloo,
rime's CPU engine, small --seq) only checks that the script runs.
"""

import argparse
import json
import os
import statistics
import time

import torch
import torch.distributed as dist

import rime
import rime.distributed as rd
from rime.distributed._ring import DKV, KV, Ring


def sync():
    if torch.cuda.is_initialized():
        torch.cuda.synchronize()


def timed(fn, repeats):
    """Median wall time of ``fn`` over ``repeats`` runs, every rank synchronized around each."""
    times = []
    for _ in range(repeats):
        sync()
        dist.barrier()
        t = time.perf_counter()
        fn()
        sync()
        dist.barrier()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def compute_only(q, k, v, o, do, stats, rank, world, s, backward):
    """Every block call of every ring step on this rank's own data, without messages."""
    mine = rd.segments("zigzag", rank, world, s)
    for source in range(world):
        for c in rd.block_calls(mine, rd.segments("zigzag", source, world, s), 0, None, 0):
            rows, cols = slice(*c.rows), slice(*c.cols)
            kw = dict(window=(c.left, c.right))
            if backward:
                rime.sdpa_backward(q[:, :, rows], k[:, :, cols], v[:, :, cols], o[:, :, rows],
                                   do[:, :, rows], stats[:, :, rows], **kw)
            else:
                rime.sdpa(q[:, :, rows], k[:, :, cols], v[:, :, cols], **kw)


def comm_only(ring, kv, dkv, backward):
    """The ring's messages alone: the key / value shard around, and the accumulator."""
    for _ in range(ring.size - 1):
        ring.shift(kv, KV).wait()
    if backward:
        for _ in range(ring.size):
            ring.shift(dkv, DKV).wait()


def measure(s, args, rank, world, ring, dev):
    """The row of one global sequence length ``s``."""
    n, h, d = s // world, args.heads, args.dim
    g = torch.Generator(device=dev).manual_seed(rank)
    q, k, v, do = (torch.randn((1, h, n, d), device=dev, dtype=torch.bfloat16, generator=g)
                   for _ in range(4))
    fwd = lambda: rd.sdpa(q, k, v, causal=True)  # noqa: E731
    o, stats = fwd()
    bwd = lambda: rd.sdpa_backward(q, k, v, o, do, stats, causal=True)  # noqa: E731
    bwd()
    kv = torch.cat([k.reshape(-1), v.reshape(-1)])
    dkv = torch.zeros(kv.shape, dtype=torch.float32, device=dev)
    row = {"seq": s, "world": world, "heads": h, "dim": d}
    for name, ring_fn, back in (("forward", fwd, False), ("backward", bwd, True)):
        compute_only(q, k, v, o, do, stats, rank, world, s, back)
        t_ring = timed(ring_fn, args.repeats)
        t_comp = timed(lambda: compute_only(q, k, v, o, do, stats, rank, world, s, back),
                       args.repeats)
        t_comm = timed(lambda: comm_only(ring, kv, dkv, back), args.repeats) if world > 1 else 0.0
        hidden = None
        if t_comm > 0:
            hidden = min(1.0, max(0.0, (t_comp + t_comm - t_ring) / t_comm))
        row[name] = {"ring_s": t_ring, "compute_s": t_comp, "comm_s": t_comm,
                     "comm_hidden": hidden}
    if world == 1:
        qg, kg, vg = (x.detach().clone().requires_grad_() for x in (q, k, v))

        def rime_step():
            rime.attention(qg, kg, vg, causal=True).backward(do)

        def torch_step():
            torch.nn.functional.scaled_dot_product_attention(qg, kg, vg, is_causal=True).backward(do)

        rime_step()
        row["rime_attention_fwd_bwd_s"] = timed(rime_step, args.repeats)
        try:
            torch_step()
            row["torch_sdpa_fwd_bwd_s"] = timed(torch_step, args.repeats)
        except RuntimeError as e:  # out of memory, or no backend for the size
            row["torch_sdpa_fwd_bwd_s"] = f"failed: {e}"[:200]
    return row


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--out", required=True)
    p.add_argument("--seq", default="32768,65536,131072")
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--device", default="cuda", choices=["cuda", "cpu"])
    args = p.parse_args()
    local = int(os.environ.get("LOCAL_RANK", 0))
    if args.device == "cuda":
        torch.cuda.set_device(local)
        dev = torch.device("cuda", local)
    else:
        dev = torch.device("cpu")
    dist.init_process_group("nccl" if args.device == "cuda" else "gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    ring = Ring()
    rows = []
    for s in (int(x) for x in args.seq.split(",")):
        row = measure(s, args, rank, world, ring, dev)
        rows.append(row)
        if rank == 0:
            f, b = row["forward"], row["backward"]
            print(f"S={s:>7} W={world} fwd ring {f['ring_s'] * 1e3:8.1f} ms (compute "
                  f"{f['compute_s'] * 1e3:8.1f}, comm {f['comm_s'] * 1e3:7.1f}, hidden "
                  f"{f['comm_hidden']}) | bwd ring {b['ring_s'] * 1e3:8.1f} ms (compute "
                  f"{b['compute_s'] * 1e3:8.1f}, comm {b['comm_s'] * 1e3:7.1f}, hidden "
                  f"{b['comm_hidden']})", flush=True)
        if args.device == "cuda":
            torch.cuda.empty_cache()
    if rank == 0:
        os.makedirs(args.out, exist_ok=True)
        with open(os.path.join(args.out, f"distributed_scaling_w{world}.json"), "w") as fh:
            name = torch.cuda.get_device_name(dev) if args.device == "cuda" else "cpu"
            json.dump({"device": name, "rows": rows}, fh, indent=1)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()

"""A tiny training loop on rime's attention (the README's example): one attention layer with a
learned bias fits a fixed target. Runs on CUDA when there is a GPU, else on the CPU engine.

    python crates/python/examples/train.py [--steps 50]
"""

import argparse

import torch

import rime


def main(steps=50):
    dev = "cuda" if torch.cuda.is_available() else "cpu"
    torch.manual_seed(0)
    B, H, S, D = 2, 4, 128, 64
    x = torch.randn(B, S, H * D, device=dev, dtype=torch.bfloat16)
    target = torch.randn(B, H, S, D, device=dev, dtype=torch.bfloat16)
    proj = torch.nn.Linear(H * D, 3 * H * D, device=dev, dtype=torch.bfloat16)
    bias = torch.zeros(1, H, S, S, device=dev, dtype=torch.bfloat16, requires_grad=True)
    opt = torch.optim.Adam([*proj.parameters(), bias], lr=1e-2)
    losses = []
    for _ in range(steps):
        q, k, v = proj(x).view(B, S, 3, H, D).unbind(2)  # BSHD views, used in place
        o = rime.attention(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2),
                           bias=bias, causal=True)
        loss = (o.float() - target.float()).square().mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    print(f"{dev}: loss {losses[0]:.4f} -> {losses[-1]:.4f} in {steps} steps")
    return losses


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=50)
    main(parser.parse_args().steps)

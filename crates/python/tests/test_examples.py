"""The README's Python example and examples/train.py run (on the CPU here) and train."""

import os
import re
import runpy

import pytest

torch = pytest.importorskip("torch", reason="PyTorch is not installed")

ROOT = os.path.join(os.path.dirname(__file__), "..", "..", "..")


def test_the_readme_training_example_runs_and_trains():
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    section = readme.split("## Python", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    space = {}
    exec(compile(code, "README.md", "exec"), space)
    first = space["rime"].attention(space["q"], space["k"], space["v"], bias=space["bias"],
                                    causal=True).float().square().mean().item()
    assert space["loss"].item() > first, "ten Adam steps lowered the loss"
    assert space["bias"].grad is not None and space["q"].grad is not None


def test_the_training_example_lowers_its_loss():
    train = runpy.run_path(os.path.join(ROOT, "crates", "python", "examples", "train.py"))
    losses = train["main"](steps=8)
    assert losses[-1] < losses[0]

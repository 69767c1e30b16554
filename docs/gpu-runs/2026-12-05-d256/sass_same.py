#!/usr/bin/env python3
"""Which kernels two trees compile to the same SASS: run the fitness test in each tree with
RIME_FITNESS_ARCH=90 RIME_FITNESS_KEEP=1 (--nocapture, output to LOG), then
  sass_same.py LOG_A DIR_A LOG_B DIR_B
with the kept folders it printed. Builds are matched by their description (the defines, less
SPLIT_SDP=0, which older trees lack); cubins are compared as `cuobjdump -sass` text without the
addresses. Needs cuobjdump beside RIME_PTXAS (the PyPI nvidia-cuda-nvcc package has both)."""
import collections
import os
import re
import subprocess
import sys

BIN = os.path.dirname(os.environ["RIME_PTXAS"])


def index(log, folder):
    """Description -> cubin, numbered in the order the fitness test first assembled them."""
    out, n = {}, 0
    for line in open(log):
        m = re.match(r"sm_\d+ (\S+ .*?): \d+ regs x", line)
        if not m or "(assembled above)" in line:
            continue
        out[m.group(1).replace(" SPLIT_SDP=0", "")] = os.path.join(folder, f"k{n}.cubin")
        n += 1
    return out


def sass(path):
    text = subprocess.run([os.path.join(BIN, "cuobjdump"), "-sass", path],
                          capture_output=True, text=True, check=True).stdout
    return [re.sub(r"/\*[0-9a-f]{4}\*/", "", l) for l in text.splitlines() if l.strip().startswith("/*")]


a, b = index(*sys.argv[1:3]), index(*sys.argv[3:5])
same, differ = collections.Counter(), collections.Counter()
for desc in a.keys() & b.keys():
    family = " ".join(w for w in desc.split() if w.endswith(".cu") or w.startswith(("HEAD_DIM_QK", "STAGES")))
    (same if sass(a[desc]) == sass(b[desc]) else differ)[family] += 1
print(f"only in A: {len(a.keys() - b.keys())}, only in B: {len(b.keys() - a.keys())}")
for family in sorted(same.keys() | differ.keys()):
    print(f"{family:50s} same {same[family]:4d}  differ {differ[family]:4d}")

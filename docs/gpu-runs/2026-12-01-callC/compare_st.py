"""Compares safetensors files tensor by tensor: python3 compare_st.py REF.safetensors OTHER..."""
import json, struct, sys
import numpy as np

def load(path):
    raw = open(path, "rb").read()
    n = struct.unpack("<Q", raw[:8])[0]
    head = json.loads(raw[8:8 + n])
    body = raw[8 + n:]
    out = {}
    for name, t in head.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        buf = body[a:b]
        dt = t["dtype"]
        if dt == "BF16":
            v = (np.frombuffer(buf, dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif dt == "F16":
            v = np.frombuffer(buf, dtype=np.float16).astype(np.float32)
        elif dt == "F32":
            v = np.frombuffer(buf, dtype=np.float32)
        else:
            v = np.frombuffer(buf, dtype=np.int32).astype(np.float32)
        out[name] = v.astype(np.float64)
    return out

ref = load(sys.argv[1])
worst = 0.0
for other in sys.argv[2:]:
    o = load(other)
    errs = []
    for name, r in ref.items():
        x = o.get(name)
        if x is None:
            errs.append(f"{name}=MISSING"); worst = float("inf"); continue
        bad = int((~np.isfinite(x)).sum())
        e = float(np.linalg.norm(x - r) / max(np.linalg.norm(r), 1e-30))
        worst = max(worst, e if bad == 0 else float("inf"))
        errs.append(f"{name}={e:.2e}" + (f"({bad} non-finite)" if bad else ""))
    print(f"{other}: vs {sys.argv[1]}: " + " ".join(errs))
print(f"worst {worst:.2e} -> {'PASS' if worst <= 1e-2 else 'FAIL'}")

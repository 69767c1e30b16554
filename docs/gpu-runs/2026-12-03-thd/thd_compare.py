"""THD fixtures on the sm120 engine against the CPU engine, through `rime run` (H200, 2026-12-03).

python3 thd_compare.py RIME OUTDIR FIXTURE... : every fixture runs on cpu_reference and on each
sm120 route the analyzer approves (`rime run --engine sm120/<route>`), all from the same seeded
random inputs (rime run packs ragged tensors by the packed offsets of its random lengths and
writes ragged outputs back as (B, H, S, D) with zeros where a sequence has no row). Prints one
JSON line per (fixture, route, output): the largest |sm120 - cpu| over max |cpu|, and whether the
zero rows stayed zero. Needs torch (for bf16/f16) on the GPU machine."""
import json, struct, subprocess, sys, pathlib
import torch

DT = {"BF16": torch.bfloat16, "F16": torch.float16, "F32": torch.float32, "F64": torch.float64,
      "I32": torch.int32, "I64": torch.int64}

def load(path):
    raw = pathlib.Path(path).read_bytes()
    n = struct.unpack("<Q", raw[:8])[0]
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    out = {}
    for name, h in header.items():
        if name == "__metadata__":
            continue
        a, b = h["data_offsets"]
        t = torch.frombuffer(bytearray(data[a:b]), dtype=DT[h["dtype"]]).reshape(h["shape"])
        out[name] = t.double()
    return out

rime, outdir, fixtures = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
outdir.mkdir(parents=True, exist_ok=True)
for fx in fixtures:
    stem = pathlib.Path(fx).stem
    ref = outdir / f"{stem}.cpu.safetensors"
    r = subprocess.run([rime, "run", fx, "--target", "auto", "--engine", "cpu_reference",
                        "--outputs", str(ref), "--seed", "7"], capture_output=True, text=True)
    if r.returncode != 0:
        print(json.dumps({"fixture": stem, "route": "cpu_reference", "error": r.stderr[-800:]}))
        continue
    want = load(ref)
    for route in ["atomic", "relay", "two_kernel", "ordered_dbias", None]:
        engine = "sm120" if route is None else f"sm120/{route}"
        got_path = outdir / f"{stem}.{route or 'sm120'}.safetensors"
        r = subprocess.run([rime, "run", fx, "--target", "auto", "--engine", engine,
                            "--outputs", str(got_path), "--seed", "7"],
                           capture_output=True, text=True)
        if r.returncode != 0:
            print(json.dumps({"fixture": stem, "route": engine, "refused": r.stderr.strip()[-300:]}))
            continue
        got = load(got_path)
        for name, w in want.items():
            g = got.get(name)
            if g is None:
                print(json.dumps({"fixture": stem, "route": engine, "tensor": name, "error": "missing"}))
                continue
            scale = max(w.abs().max().item(), 1e-30)
            err = (g - w).abs().max().item() / scale
            zeros_kept = not bool(((w == 0) & (g != 0)).any().item()) if g.shape == w.shape else False
            print(json.dumps({"fixture": stem, "route": engine, "tensor": name, "rel_err": err,
                              "nan": int(torch.isnan(g).sum().item()),
                              "zero_rows_kept": zeros_kept}))

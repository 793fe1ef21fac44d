"""For each GPU repro (the repro.py files of corpus entries that need a GPU, copied into
.gpu/repros/ or the folder given): its own exit code, and whether plain
torch.compile(backend="inductor") on CUDA departs from eager (outputs, inputs after the
call, output aliasing). Run on the device: PYTHONPATH=/tmp/site python3 bench/gpu/plain_check.py"""
import glob
import os
import subprocess
import sys

import torch


def plain(path):
    src = open(path).read()
    cut = src.find('print("torch", torch.__version__')
    g = {"__name__": "plain"}
    exec(compile(src[:cut], path, "exec"), g)
    f, inputs = g["f"], g["inputs"]
    a, b = inputs(), inputs()
    try:
        want = f(*a)
    except Exception as e:
        return f"eager raises {type(e).__name__}"
    torch._dynamo.reset()
    try:
        got = torch.compile(f, backend="inductor")(*b)
    except Exception as e:
        return f"compiled raises {type(e).__name__}: {str(e).splitlines()[0][:150]}"
    torch.cuda.synchronize()
    msgs = []
    for what, x, y in (("outputs", got, want), ("inputs", b, a)):
        try:
            torch.testing.assert_close(x, y, equal_nan=True)
        except AssertionError as e:
            msgs.append(f"{what} differ: {str(e).splitlines()[0][:120]}")
    def ptrs(outs, ins):
        outs = outs if isinstance(outs, (tuple, list)) else (outs,)
        return [[i for i, t in enumerate(ins) if isinstance(o, torch.Tensor) and o.untyped_storage().data_ptr() == t.untyped_storage().data_ptr()] for o in outs]
    if ptrs(want, a) != ptrs(got, b):
        msgs.append(f"aliasing differs: eager {ptrs(want, a)} compiled {ptrs(got, b)}")
    return "; ".join(msgs) or "agrees"

for path in sorted(glob.glob(sys.argv[1] + "/*.py" if len(sys.argv) > 1 else ".gpu/repros/*.py")):
    r = subprocess.run([sys.executable, path], capture_output=True, text=True, timeout=300)
    tail = (r.stdout + r.stderr).strip().splitlines()[-1:] or [""]
    try:
        p = plain(path)
    except BaseException as e:
        p = f"check failed: {type(e).__name__}: {e}"[:200]
    print(f"{os.path.basename(path)}\trepro exit {r.returncode}\t{tail[0][:160]}\tplain torch.compile: {p}", flush=True)

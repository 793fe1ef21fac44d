"""[inductor] torch.compile(backend="inductor") moves more bytes than an equivalent spelling: witness graph-split: `x_w = x.add_(1.0)` spelled `x_w = x.add_(1.0); torch._dynamo.graph_break()` gives eager's...

Found by aliasfuzz (missed-reinplace-unblamed-inductor-2e5d53d047, torch 2.13.0+cpu). Exit:
1 the bug shows, 0 fixed, 4 no claim (f or f_witness compiled no longer gives eager's
values), 125 it broke (an exception outside the check).
A cost claim (graph-split): f and f_witness compute the same values; Inductor's code for f
moves more bytes per call than for f_witness (Inductor's own count, the first figure of the
finding's explanation). No stage is named: stages are cut by values, which agree with eager
at every stage."""
import logging
import os, sys, traceback  # an exception outside the check exits 125: the repro broke
sys.excepthook = lambda *e: (traceback.print_exception(*e), sys.stdout.flush(), sys.stderr.flush(), os._exit(2 if isinstance(e[1], ModuleNotFoundError) and e[1].name == 'torch' else 125))
import torch
from torch._inductor import metrics
from torch.utils._pytree import tree_leaves

torch.compiler.config.force_disable_caches = True  # run the passes
# Inductor counts the bytes each compiled graph moves when its metrics log is on
logging.getLogger("torch._inductor.compile_fx.__inductor_metrics").setLevel(logging.INFO)


def f(x, vals):
    x_w = x.add_(1.0)
    x1 = x.index_reduce_(0, torch.tensor([13, 4], device=x.device), vals, 'amin', include_self=True)
    return None


def f_witness(x, vals):
    x_w = x.add_(1.0)
    torch._dynamo.graph_break()  # the witness: two graphs
    x1 = x.index_reduce_(0, torch.tensor([13, 4], device=x.device), vals, 'amin', include_self=True)
    return None


def inputs():  # exact sizes, strides, offsets
    xs = torch.arange(64, dtype=torch.float32)
    vs = torch.tensor((-1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0, -1.0), dtype=torch.float64).to(torch.float32).reshape(8)
    return (torch.as_strided(xs, (16, 4), (4, 1), 0), torch.as_strided(vs, (2, 4), (4, 1), 0))


def compiled(fn):  # Inductor's count of the bytes its code moves per call; the results
    torch._dynamo.reset()
    metrics.reset()
    ins = inputs()
    out = torch.compile(fn, backend="inductor")(*ins)
    return (metrics.num_bytes_accessed, metrics.generated_kernel_count), tree_leaves((out, ins))


def same(a, b):
    try:
        for x, y in zip(a, b, strict=True):
            if isinstance(x, torch.Tensor):
                torch.testing.assert_close(y, x)
            else:
                assert x == y
    except (AssertionError, ValueError):
        return False
    return True


print("torch", torch.__version__)
e = inputs()
eager = tree_leaves((f(*e), e))
(moved, kernels), out = compiled(f)
(moved_witness, kernels_witness), out_witness = compiled(f_witness)
if not moved:  # Inductor's byte count was not logged: nothing was measured
    print("Inductor's metrics counted 0 bytes for f: the repro broke")
    raise SystemExit(125)
if not (same(eager, out) and same(eager, out_witness)):
    print("f or f_witness compiled no longer gives eager's values: no cost claim")
    raise SystemExit(4)
# metrics.num_bytes_accessed: the first figure of the finding's explanation (its loop-extent
# count, the oracle's own, comes after it)
print(f"Inductor's own count: f moves {moved} bytes per call in {kernels} kernel(s), "
      f"f_witness {moved_witness} in {kernels_witness}")
raise SystemExit(1 if moved > moved_witness else 0)

"""[inductor] reinplace_inplaceable_ops keeps a copy it could write in place: select_scatter (input): no conflicting access; forced in place, 2 runs agree with eager; Inductor's generated code mo...

Blamed stage: reinplace (reinplace_inplaceable_ops), the first whose result departs from eager.
Found by aliasfuzz (missed-reinplace-reinplace-8c9f0d424d, torch 2.13.0+cpu). Exit: 1 the bug shows, 0 fixed.
Cost: Inductor's generated code moves 32 bytes per call in 1 kernels, 24 bytes in 2 with the
copy dropped (1.3x); excess 8 bytes for a 16-byte tensor (oracle/confirm.py measure_excess).
HARNESS, not public API alone: a missed reinplace is a decision inside Inductor's reinplace
pass, so this script wraps torch._inductor.fx_passes.post_grad.reinplace_inplaceable_ops to
list the copies it leaves (the fuzzer confirmed that writing the candidate in place agrees
with eager)."""
import torch
from torch._inductor.fx_passes import post_grad
torch._inductor.config.force_disable_caches = True  # run the pass

def f(x1):
    x1[2] = 0.5
    v0 = x1.add_(1.0)
    return None

def inputs():  # exact sizes, strides, offsets
    s1 = torch.arange(5, dtype=torch.float32)
    return (torch.as_strided(s1, (4,), (1,), 0),)

def nbytes(n):  # bytes of a graph value (a tensor or a list of tensors)
    v = n.meta.get("val") if isinstance(n, torch.fx.Node) else None
    return sum(t.numel() * t.element_size() for t in (v if isinstance(v, (list, tuple)) else [v])
               if isinstance(t, torch.Tensor))

copies, reinplace_pass = [], post_grad.reinplace_inplaceable_ops

def watched(updater, graph):  # Inductor's reinplace pass, then the copies it left
    before = set(graph.nodes)
    reinplace_pass(updater, graph)
    for n in graph.nodes:
        if n not in before and str(n.target).endswith("_scatter.default"):  # new base
            copies.append(f"{n.name}: writes {nbytes(n)} bytes (all of its base) for a {nbytes(n.args[1])}-byte update")
        if n not in before and n.target is torch.ops.aten.clone.default:
            copies.append(f"{n.name}: copies {nbytes(n)} bytes")

post_grad.reinplace_inplaceable_ops = watched  # post_grad_passes calls the pass by this name

print("torch", torch.__version__)
torch.compile(f, backend="inductor")(*inputs())
print("\n".join(copies) or "no copy left: the pass writes in place (fixed)")
raise SystemExit(1 if copies else 0)

"""Ops with several ``out=`` tensors (hand-written programs only).

``torch.aminmax(x, dim=d, keepdim=k, out=(lo, hi))`` writes two ``out=`` tensors
(``aten::aminmax.out(..., Tensor(a!) min, Tensor(b!) max)``). Where they overlap, which value
lands is the order the kernel writes them in (``TensorIteratorBase::compute_mem_overlaps``
checks outputs against inputs only; with one tensor for both, even its resizing differs):
validation's ``overlapping-writes`` rule rejects that, and this row is how programs express
the case. Like ``add.out``, the ``out=`` tensors must have exactly the reduced shape (no
resizing).

The row has no ``gen``: generating it would shift a third of the ``out`` family's statements
away from ``add.out`` / ``mul.out`` (measured: 3,514 ``add.out`` instead of 5,070 in 10,000
programs) and bring new findings to triage; with a ``gen`` drawing ``dim`` / ``keepdim`` that
fit and disjoint outputs it runs under every pipeline but ``torchscript`` (not scriptable).
"""

from __future__ import annotations

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, norm_dim

__all__ = ["OPS"]


def _reduced(x: ValueMeta, d: int, keepdim: bool) -> tuple[int, ...]:
    return x.shape[:d] + ((1,) if keepdim else ()) + x.shape[d + 1 :]


def _aminmax_infer(metas, p, outs):
    x, lo, hi = metas
    if x.ndim == 0 or x.dtype == "bool":
        raise InvalidArgument("aminmax.out is modelled for non-bool tensors with a dim")
    d = norm_dim(p["dim"], x.ndim)
    if x.shape[d] == 0:
        raise InvalidArgument("aminmax: cannot reduce over a zero-size dimension")
    shape = _reduced(x, d, bool(p.get("keepdim", False)))
    for name, o in (("min", lo), ("max", hi)):
        if o.shape != shape or o.dtype != x.dtype:
            raise InvalidArgument(
                f"aminmax.out: {name} must have shape {shape} and dtype {x.dtype} (no resizing here)"
            )
    return (lo, hi)


OPS = [
    OpDef(
        name="aminmax.out", kind=OpKind.OUT, arity=3, infer=_aminmax_infer,
        apply=lambda t, p: torch.aminmax(
            t[0], dim=p["dim"], keepdim=bool(p.get("keepdim", False)), out=(t[1], t[2])
        ),
        render=lambda e, p: f"torch.aminmax({e[0]}, dim={p['dim']}, "
        f"keepdim={bool(p.get('keepdim', False))}, out=({e[1]}, {e[2]}))",
        mutates=(1, 2), reads=(0,), n_out=2, scriptable=False,
        doc="torch.aminmax(x, dim=d, keepdim=k, out=(lo, hi)): min and max over dim d into two "
        "out= tensors of exactly the reduced shape; returns (lo, hi) (hand-written only)",
    ),
]

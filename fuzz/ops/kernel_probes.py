"""Probe kernels for the oracle's comparison of Inductor's Triton mutation analysis.

Two launch rows (built with :func:`aliasfuzz.fuzz.ops.kernels._row`, no ``gen``: they
appear in hand-written programs only) whose true footprint and Inductor's claim
(``torch/_higher_order_ops/triton_kernel_wrap.py``, ``get_mutated_tensors``) differ by
construction; :mod:`aliasfuzz.oracle.kernel_analysis` classifies them:

* ``kp.copy_if`` stores ``y = x`` only when its runtime ``flag`` argument is non-zero. The
  TTIR analysis is static (a store on any path marks the pointer written), so with
  ``flag=0`` it claims ``y`` written although the launch writes nothing: an **over-claim**
  (torch 2.13). torch 2.11's ``generate_ttir`` passes every non-tensor argument to Triton
  as a constant, so the TTIR it analyses is specialised on ``flag`` and ``n``: ``flag=0``
  folds the store away (no claim: agree); a store masked off by ``n=0`` stays in the TTIR
  and is an over-claim on both releases.
* ``kp.scale_default`` has a ``tl.constexpr`` parameter with a default value that the
  launch leaves out. Dynamo and ``wrap_triton`` pass only the arguments given at the call
  (``TritonHOPifier.call_triton_kernel``), ``generate_ttir`` then raises "Incorrect number
  of arguments passed to kernel" and ``identify_accessed_tensors`` falls back to "every
  tensor argument is mutated" (a WARNING on the ``torch._dynamo`` logger). Triton itself
  fills the default, so the launch runs (natively and in the interpreter): the read-only
  ``x`` is claimed written, a **fallback**. The written argument comes first, so that in
  ``kp.scale_default(z, z)`` Inductor's reinplace pass (which reinplaces one argument per
  storage, in ``tensors_to_clone`` order) keeps the needless clone of ``x``. Checked on torch 2.13.0 / triton 3.7.1.

Without an importable triton this family is empty.
"""

from __future__ import annotations

from aliasfuzz.fuzz.ops import kernels
from aliasfuzz.fuzz.ops.core import OpDef

__all__ = ["OPS"]

_KERNELS = {
    "fzp_copy_if": """
import triton
import triton.language as tl


@triton.jit
def fzp_copy_if(x_ptr, y_ptr, n, flag, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    if flag != 0:
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=mask), mask=mask)
""",
    "fzp_scale_default": """
import triton
import triton.language as tl


@triton.jit
def fzp_scale_default(out_ptr, x_ptr, n, BLOCK: tl.constexpr, ALPHA: tl.constexpr = 2.0):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * ALPHA, mask=mask)
""",
}

if kernels._HAVE_TRITON:
    for _name, _src in _KERNELS.items():
        # the eager reference on plain CPU tensors runs interpreted, like the library's
        kernels.register_kernel(_name, _src)


def _copy_if_writes(metas, v):
    # the store runs only when flag != 0: with flag 0 this launch writes nothing
    (w,) = kernels._flat_writes(1)(metas, v)
    return [w if v["flag"] != 0 else w.view((0,), (1,), w.offset)]


OPS: list[OpDef] = []
if kernels._HAVE_TRITON:
    OPS = [
        kernels._row(
            "kp.copy_if",
            "fzp_copy_if",
            2,
            ("n", "flag"),
            mutates=(1,),
            reads=(0,),
            bound=kernels._flat_bound(0, 1),
            writes=_copy_if_writes,
            doc="fzp_copy_if[grid](x, y, n, flag, BLOCK): y.flat[:n] = x.flat[:n] when "
            "flag != 0, else nothing (a store gated by a runtime flag: over-claim probe)",
        ),
        kernels._row(
            "kp.scale_default",
            "fzp_scale_default",
            2,
            ("n",),
            mutates=(0,),
            reads=(1,),
            bound=kernels._flat_bound(0, 1),
            writes=kernels._flat_writes(0),
            doc="fzp_scale_default[grid](out, x, n, BLOCK): out.flat[:n] = 2 * x.flat[:n] "
            "through a defaulted constexpr the launch omits (analysis fallback probe)",
        ),
    ]

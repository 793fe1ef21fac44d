"""Hand check of the reconstructed ``miscompile-inductor-reinplace-015634b84c`` (two effects).

A user Triton kernel writes ``first * 10`` then ``second + 1`` and is launched with the
same tensor for both pointers (``k(x, x)``, PyTorch #196657). The script runs, with torch
and triton only (plus aliasfuzz's CPU Triton layer, ``fuzz/triton_compat.py``: a fake
sm_90 target for Inductor's mutation analysis, launches in Triton's interpreter):

1. eager: ``x = [1, 11, 2, 3]``;
2. ``aot_function`` with a no-op compiler (functionalization alone, what ``aot_eager``
   runs): the functional wrapper clones both arguments and copies back only
   ``second_ptr``'s result, so the ``* 10`` write is lost: ``[1, 2, 2, 3]``;
3. the same graph through Inductor's reinplace pass standalone (as ``post_grad_passes``
   and ``corpus/*/repro.py`` run it): the pass writes ``first_ptr`` in place, keeps the
   clone of ``second_ptr`` and erases the ``copy_`` of ``second_ptr``'s result into ``x``,
   so the ``+ 1`` write is lost instead: ``[0, 10, 2, 3]``.

Run from the repository root: ``.venv/bin/python tests/data/audit/check_015634b84c.py``.
It prints the graphs around the pass and exits 1 when both effects are present (the
finding reproduces), 0 otherwise.
"""

from __future__ import annotations

import sys

import torch
import triton
import triton.language as tl
from torch._functorch.aot_autograd import aot_function
from torch._guards import detect_fake_mode
from torch._inductor.decomposition import select_decomp_table
from torch._inductor.fx_passes import post_grad
from torch._inductor.fx_utils import FakeTensorUpdater
from torch._inductor.virtualized import V

from aliasfuzz.fuzz import triton_compat


@triton.jit
def scale_then_shift(first_ptr, second_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(first_ptr + offs, tl.load(first_ptr + offs) * 10.0)
    tl.store(second_ptr + offs, tl.load(second_ptr + offs) + 1.0)


def program(x):
    scale_then_shift[(1,)](x, x, BLOCK=2)


def _show(tag, gm):
    print(f"--- {tag}")
    for n in gm.graph.nodes:
        if n.op == "call_function":
            print("   ", n.format_node())


def _functional_only(gm, _inputs):
    _show("functionalized graph", gm)
    return gm


def _with_reinplace_pass(gm, _inputs):
    fake = detect_fake_mode([n.meta["val"] for n in gm.graph.nodes if "val" in n.meta])
    with V.set_fake_mode(fake):
        post_grad.reinplace_inplaceable_ops(FakeTensorUpdater(gm), gm.graph)
        _show("after reinplace_inplaceable_ops", gm)
        post_grad.decompose_triton_kernel_wrapper_functional(gm.graph)
    gm.recompile()
    return gm


def _run(compiler=None) -> list[float]:
    torch._dynamo.reset()
    x = torch.arange(4.0)
    if compiler is None:
        program(x)
    else:
        kw = {"decompositions": select_decomp_table(), "keep_inference_input_mutations": True}
        aot_function(program, fw_compiler=compiler, **kw)(x)
    return x.tolist()


def main() -> int:
    triton_compat.enable()  # no-op on a GPU machine apart from the traced-launch route
    eager = _run()
    functional = _run(_functional_only)
    reinplaced = _run(_with_reinplace_pass)
    print("eager:               ", eager)
    print("functionalized:      ", functional)
    print("with reinplace pass: ", reinplaced)
    # each run keeps exactly one of the kernel's two writes: * 10 (first), + 1 (second)
    lost_scale = functional == [1.0, 2.0, 2.0, 3.0]
    lost_shift = reinplaced == [0.0, 10.0, 2.0, 3.0]
    print(f"functionalization loses the first write: {lost_scale}; "
          f"the reinplace pass loses the second: {lost_shift}")
    return 1 if eager == [1.0, 11.0, 2.0, 3.0] and lost_scale and lost_shift else 0


if __name__ == "__main__":
    sys.exit(main())

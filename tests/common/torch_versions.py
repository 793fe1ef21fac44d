"""Where the torch under test changes what a test may expect.

aliasfuzz supports torch >= 2.11: the GPU machine runs 2.11, CI runs 2.13. Some bugs the
tests pin were introduced or fixed between the two, and torch 2.11 has one defect 2.13
fixed. Each difference is named here once, with its evidence (a plain-torch check run
under both releases, or the torch source lines that differ); a test whose expectation
depends on it asserts the 2.11 behaviour on 2.11 and the 2.13 one elsewhere, so that it
can fail on both. Only 2.11 and 2.13 were checked: any other release takes the 2.13
expectation until someone checks it.
"""

from __future__ import annotations

import torch
from torch.torch_version import Version

__all__ = ["ON_TORCH_2_11", "RELEASE", "on_torch_2_11", "torch_before"]

#: ``(major, minor)`` of the torch under test.
RELEASE: tuple[int, int] = tuple(int(x) for x in torch.__version__.split("+")[0].split(".")[:2])  # type: ignore[assignment]

#: difference -> what torch 2.11 does where 2.13 does otherwise (and how we know).
ON_TORCH_2_11: dict[str, str] = {
    "addcmul-not-lowered-through-fma": (
        "2.11 decomposes aten.addcmul (torch/_inductor/lowering.py::addcmul returns "
        "NotImplemented unless config.emulate_precision_casts); 2.13 removes addcmul from "
        "the decomposition table (torch/_inductor/decomposition.py) and always lowers it "
        "through its FMA lowering, which loses an int64 product: x = tensor([3, 2**20 + 1]); "
        "x.addcmul_(x, x, value=2) compiled gives 2199028498432 on 2.13, 2199028498435 "
        "(eager's) on 2.11 (audit root addcmul-int-through-fma)"
    ),
    "noop-slice-scatter-into-custom-op-runs-right": (
        "fifth audit 2be6c01096: slice_scatter(x0, x0) over all of x0, then a custom op "
        "mutating the result; full Inductor returns eager's values on 2.11, departs on 2.13 "
        "(torch.compile(backend='inductor') alone, caches off)"
    ),
    "index-copy-self-values-runs-right": (
        "fourth audit 1b9297cb46: index_copy(out=) of v0 into itself with v0 as values; full "
        "Inductor returns eager's values on 2.11 ([18, 22, 20, 16]), [18, 16, 20, 16] on 2.13; "
        "the oracle's alias model still flags the reinplaced index_put, undecided (unknown)"
    ),
    "decompose-auto-functionalized-clones-nothing-undecided": (
        "with the reinplace pass disabled (disabled_passes=REINPLACE_INPLACEABLE_OPS) no "
        "auto_functionalized node carries only_clone_these_tensors; 2.11's "
        "decompose_auto_functionalized reads meta.get(..., []) and clones nothing, 2.13's "
        "reads None and clones everything (torch/_inductor/fx_passes/post_grad.py): "
        "y = x.sin(); w = y * 1.0; add_one_(y); return y, w gives w bumped by 1 on 2.11"
    ),
    "issue-153389": (
        "pytorch/pytorch#153389: two custom ops on sibling views of one base; 2.11's full "
        "Inductor returns [1.5, 2.5, 3.5] for eager's [19.5, 23.5, 27.5] (shared case b09, "
        "whose expect block describes 2.13, where it is fixed)"
    ),
}


def on_torch_2_11(difference: str) -> bool:
    """Whether the test runs on torch 2.11, where ``difference`` (a key of
    :data:`ON_TORCH_2_11`) holds. Raises ``KeyError`` for an unknown name, so a test cannot
    depend on a difference nobody documented."""
    ON_TORCH_2_11[difference]  # noqa: B018 - the name must be documented above
    return RELEASE == (2, 11)


def torch_before(release: str) -> bool:
    """Whether the running torch's release (``major.minor``, local and dev parts ignored:
    a 2.13 nightly counts as 2.13) is older than ``release`` (e.g. ``"2.13"``): for a
    difference whose torch source lines are named next to the condition (the Triton kernel
    analysis' tests), so that the condition is dropped with the release.

    Raises ValueError if ``release`` is not of the form ``"<int>.<int>"``.
    """
    major, minor = (int(p) for p in release.split("."))
    return Version(torch.__version__).release[:2] < (major, minor)

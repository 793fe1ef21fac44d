"""Hand check of the reconstructed ``missed-reinplace-inductor-7a0dab6dd7``.

``x[0:2] += 0.5`` compiles (Dynamo: ``getitem``, ``iadd``, ``setitem``) to a
``slice_scatter`` of the whole input that Inductor's reinplace pass does not write in
place, so the one generated kernel reads and rewrites every element of ``x``; the
``x[0:2].add_(0.5)`` spelling compiles to a kernel over the 2 elements it updates. Neither
allocates a buffer: the cost is bytes written, not a kept copy.

Run from the repository root: ``.venv/bin/python tests/data/audit/check_7a0dab6dd7.py [N]``
(N = 4096, the reconstructed program's input size, by default). It prints the loop bounds
of the generated C++ kernel of both spellings and exits 1 when the augmented assignment
rewrites all N elements while ``add_`` touches 2 (the finding reproduces), 0 otherwise.
"""

from __future__ import annotations

import re
import sys

import torch
import torch._inductor.config as inductor_config
from torch._inductor.utils import run_and_get_code


def augmented_assignment(x):
    x[0:2] += 0.5


def slice_add_(x):
    x[0:2].add_(0.5)


def _loop_bounds(fn, n: int) -> tuple[list[int], list[float]]:
    torch._dynamo.reset()
    x = torch.arange(n, dtype=torch.float32)
    with inductor_config.patch(force_disable_caches=True):
        _, (code,) = run_and_get_code(torch.compile(fn, backend="inductor"), x)
    bounds = [int(b) for b in re.findall(r"for\(int64_t \w+=[^;]*; \w+<static_cast<int64_t>\((\d+)L\);", code)]
    buffers = sorted(set(re.findall(r"\bbuf\d+\b", code)))
    print(f"{fn.__name__}: kernel loop bounds {bounds}, buffers {buffers or 'none'}, "
          f"x[:3] after the call {x[:3].tolist()}")
    return bounds, x[:3].tolist()


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 4096
    aug, aug_x = _loop_bounds(augmented_assignment, n)
    add, add_x = _loop_bounds(slice_add_, n)
    same = aug_x == add_x == [0.5, 1.5, 2.0]
    return 1 if same and aug == [n] and add == [2] else 0


if __name__ == "__main__":
    sys.exit(main())

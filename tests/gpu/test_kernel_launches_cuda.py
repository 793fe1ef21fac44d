"""Every Triton launch row on CUDA (native launches) against Triton's interpreter on CPU.

For each generated row of ``fuzz/ops/kernels.py``, launches drawn deterministically (the
row's ``gen`` on generated input layouts, strided and aliased ones included) run twice:
on CPU, where the library routes them to ``triton.runtime.interpreter``, and on CUDA with
the same storage contents, natively, through both the row's ``apply`` and the rendered
``kernel[grid](...)`` statement. Every storage must end up the same, and the CUDA launch
must change exactly the declared write footprint (as on CPU). Skipped without CUDA.
"""

from __future__ import annotations

import random

import pytest

pytest.importorskip("triton")

import torch  # noqa: E402

from aliasfuzz.errors import GenerationFailure  # noqa: E402
from aliasfuzz.fuzz.eager import interpret, make_inputs, run_eager  # noqa: E402
from aliasfuzz.fuzz.sample import RandomDraw  # noqa: E402
from tests.common.kernel_launches import (  # noqa: E402
    changed,
    declared_writes,
    fill_random,
    flat_storages,
    generated_rows,
    launch_program,
    snapshot,
)

pytestmark = pytest.mark.gpu

#: launches per row
N_LAUNCHES = 25


def _launches(name: str, n: int):
    out, seed = [], 0
    while len(out) < n and seed < 50 * n:
        try:
            out.append(launch_program(name, RandomDraw(random.Random(f"{name}:{seed}"))))
        except GenerationFailure:
            pass
        seed += 1
    return out


def _run(program, device: str, contents: dict | None, *, rendered: bool):
    inputs = make_inputs(program, device)
    flat = flat_storages(program, inputs)
    if contents is None:
        fill_random(flat, seed=7)
    else:
        for k, v in contents.items():
            flat[k].copy_(v.to(device))
    before = snapshot(flat)
    if rendered:
        r = run_eager(program, inputs)
        assert r.error is None, r.error
    else:
        interpret(program, inputs)
    if device == "cuda":
        torch.cuda.synchronize()
    return before, snapshot(flat)


@pytest.mark.parametrize("rendered", [False, True], ids=["apply", "rendered"])
@pytest.mark.parametrize("name", generated_rows())
def test_native_launch_matches_the_interpreter(name, rendered):
    programs = _launches(name, N_LAUNCHES)
    assert len(programs) >= N_LAUNCHES // 2, f"{name}: too few launches drawn"
    for p in programs:
        before, on_cpu = _run(p, "cpu", None, rendered=rendered)
        before_gpu, on_gpu = _run(p, "cuda", before, rendered=rendered)
        assert changed(before, before_gpu) == set()
        for k in on_cpu:
            torch.testing.assert_close(on_gpu[k], on_cpu[k], msg=lambda m, k=k: f"{name} {k}: {m}")
        assert changed(before_gpu, on_gpu) <= declared_writes(p)

"""The cost gate of a missed reinplace on Triton codegen (oracle/confirm.py
``measure_excess``, passes/cost.py): Inductor's byte accounting of CUDA kernels grows with
the tensor, a row update of a large CUDA input is a measured ``missed-reinplace``, and an
in-place op on an input is not. Skipped without CUDA."""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.oracle.judge import judge
from aliasfuzz.oracle.verdict import Verdict
from aliasfuzz.passes.cost import inductor_cost

pytestmark = pytest.mark.gpu


def _bytes(fn, x) -> int:
    torch._dynamo.reset()
    with inductor_cost() as graphs, torch._inductor.config.patch(force_disable_caches=True):
        torch.compile(fn, backend="inductor")(x)
    return sum(g.bytes for g in graphs)


def test_triton_kernel_bytes_grow_with_the_tensor():
    def f(x):
        return x.sin() + 1

    small = _bytes(f, torch.randn(1024, device="cuda"))
    assert small == 2 * 1024 * 4
    assert _bytes(f, torch.randn(8192, device="cuda")) == 8 * small


def _row_update(x):
    x[3] *= 2.0


def _inplace(x):
    x.mul_(2.0)



def test_row_update_of_a_cuda_input_is_a_measured_missed_reinplace():
    torch.manual_seed(0)
    j = judge(_row_update, "inductor", device="cuda", inputs=lambda: (torch.ones(64, 256, device="cuda"),))
    assert j.verdict is Verdict.MISSED_REINPLACE, (j.explanation, j.filtered)
    assert "Inductor's generated code moves" in j.explanation and "65536-byte tensor" in j.explanation
    ok = judge(_inplace, "inductor", device="cuda", inputs=lambda: (torch.ones(64, 256, device="cuda"),))
    assert ok.verdict is Verdict.OK, ok.explanation


def _c06(field, rows, work):  # shared case c06 (PyTorch #195330)
    torch.mul(field[rows], 0.5, out=work)
    field[rows] = work


def test_c06_on_cuda_has_a_witness_leaner_by_the_temporary_its_generated_code_allocates():
    # the witness repro reads the temporaries in the wrapper's call (empty_strided_cuda
    # there): the accounting and the code agree on CUDA too (audit 56, eaede8e418)
    from aliasfuzz.oracle.witness import witness_temporaries

    def make():
        return (torch.arange(64.0, device="cuda").reshape(16, 4),
                torch.tensor([1, 5, 9], device="cuda"), torch.zeros(3, 4, device="cuda"))

    j = judge(_c06, "inductor", device="cuda", inputs=make)
    assert j.verdict is Verdict.MISSED_REINPLACE and j.witness is not None, j.explanation
    assert j.witness.lean == "temporary_bytes", j.witness
    got = witness_temporaries(j.explanation)
    assert got is not None and got[0] > got[1], j.explanation

"""Generated programs with an advanced-indexing statement whose index tensors are program
inputs are judged on ``aot_eager`` without an internal error and without a finding
(``aliasfuzz check``'s judging: ``_judge.evaluate``).

aot_eager runs functionalization and AOTAutograd with eager kernels: it must reproduce eager
up to float rounding, so a finding here is a PyTorch bug or (far likelier) a precision bug of
the generator: indices out of range, repeated where a write forbids it, or a footprint the
oracle gets wrong. Programs come from the deterministic sampler (``advindex_share=1.0``),
small and limited to families whose aot_eager behaviour is known to agree with eager on
seed 2 (a pre-existing finding elsewhere in a program is not this family's).
``ALIASFUZZ_ADVINDEX_EXAMPLES`` raises the number of programs (default 12).
"""

from __future__ import annotations

import os

import pytest

from aliasfuzz.fuzz.sample import generate
from tests.common.judged import assert_judged_valid_and_no_finding

_N = int(os.environ.get("ALIASFUZZ_ADVINDEX_EXAMPLES", "12"))
_PROGRAMS = [
    p for p in generate(4 * _N, 2, families=("view", "inplace", "functional", "out"),
                        max_statements=3, dtypes=("float32", "int64"), advindex_share=1.0,
                        metadata_share=0.0)  # set_ has frozen-storage bugs of its own
    if "advindex" in p.meta
][:_N]


@pytest.mark.parametrize("program", _PROGRAMS, ids=lambda p: f"{p.meta['index']}-{p.meta['advindex']}")
def test_advindex_programs_judge_ok_on_aot_eager(program):
    assert_judged_valid_and_no_finding(program, "aot_eager")

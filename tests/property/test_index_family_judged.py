"""Generated programs with index-family statements are judged on ``aot_eager`` without an
internal error and without a finding (``aliasfuzz check``'s judging: ``_judge.evaluate``).

aot_eager runs functionalization and AOTAutograd with eager kernels: it must reproduce eager
exactly up to float rounding, so a finding here is either a PyTorch bug or (far likelier) a
precision bug of the family's rows: a footprint, a layout or a validation rule.
``ALIASFUZZ_INDEX_EXAMPLES`` raises the number of programs (default 12).
"""

from __future__ import annotations

import os

from hypothesis import HealthCheck, assume, given, settings

from aliasfuzz.campaign import _judge
from aliasfuzz.fuzz.ops import REGISTRY
from aliasfuzz.fuzz.strategies import programs
from aliasfuzz.oracle.verdict import Verdict

FAMILY = {n for n, d in REGISTRY.items() if d.apply.__module__.endswith(".indexfam")}


@settings(max_examples=int(os.environ.get("ALIASFUZZ_INDEX_EXAMPLES", "12")), deadline=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(program=programs(families=("inplace", "functional", "out"), max_statements=4,
                        dtypes=("float32", "int64")))
def test_index_family_programs_judge_ok_on_aot_eager(program):
    assume(any(op.op in FAMILY for op in program.body))
    out = _judge.evaluate(program, "aot_eager", "cpu")
    assert not Verdict(out["verdict"]).is_finding, (
        f"{out['verdict']} (check {out['check']}): {out['explanation']}\n{out['diff']}\n"
        f"{program.dumps()}"
    )

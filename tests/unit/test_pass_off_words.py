"""A repro whose blame the pass-off control moved says how it was found (audit 34).

``miscompile-joint-remove-noop-ops-4aa908be16``: every cut up to ``joint:remove_noop_ops``
agreed with eager, ``reinplace`` departed, and the pass-off control (disabling
``remove_noop_ops`` agrees, disabling the reinplace pass does not) moved the blame to
``remove_noop_ops``. Its repro called that stage "the first whose result departs from
eager", which its own trail contradicts; the auditor checked both controls by hand.
"""

from __future__ import annotations

from aliasfuzz.campaign.repro import moved_by_pass_off, render_repro
from aliasfuzz.oracle.blame import Blame, pass_off
from passes.pipelines import PipelineOptions
from tests.common.repro_cases import CASES, meta_v2

CUTS = [("dynamo", "agrees"), ("aot", "agrees"), ("joint:remove_noop_ops", "agrees"),
        ("reinplace", "departs (values: out0: values differ)")]


def _blamed(agrees_without: str) -> Blame:
    """The reinplace pass's blame after the pass-off control, where the pipeline agrees
    with eager only when pass ``agrees_without`` is disabled."""
    def runner(opts: PipelineOptions) -> str:
        return "agrees" if agrees_without in str(opts) else "departs"

    return pass_off(Blame("reinplace", ("reinplace",), list(CUTS)), "inductor",
                    PipelineOptions(), runner)


def _docstring(b: Blame) -> str:
    program, _, _ = CASES["ok-aot_eager"]
    meta = meta_v2(program, "inductor", "miscompile", "values", b.stage,
                   explanation="out0: values differ")
    meta["trail"], meta["stages"] = [list(t) for t in b.trail], list(b.stages)
    return " ".join(render_repro(program, meta).split('"""')[1].split())


def test_a_blame_the_pass_off_control_moved_says_so():
    b = _blamed("REMOVE_NOOP_OPS")
    assert b.stage == "joint:remove_noop_ops", b
    assert moved_by_pass_off(b.trail, b.stage) == ("reinplace", True)
    text = _docstring(b)
    assert "the first whose result departs" not in text, text
    assert ("by the pass-off control: the result first departs from eager after reinplace, "
            "and disabling joint:remove_noop_ops removes that departure while disabling "
            "reinplace does not") in text, text


def test_a_blame_the_pass_off_control_confirmed_is_the_first_departure():
    b = _blamed("REINPLACE_INPLACEABLE_OPS")
    assert b.stage == "reinplace" and b.trail[-1][1].endswith("blame stands"), b
    assert moved_by_pass_off(b.trail, b.stage) is None
    assert "Blamed stage: reinplace (" in _docstring(b)
    assert "the first whose result departs from eager" in _docstring(b)

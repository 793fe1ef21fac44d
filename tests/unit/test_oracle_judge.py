"""``judge`` end to end on small functions under the fast ``inductor-reinplace`` pipeline:
ok, a confirmed missed reinplace, a claim that cannot be confirmed (unknown), and a seeded
fault (a mutant pass that reinplaces everything) caught with its unsafe witness; then the
per-pipeline policies (unsupported programs, waived checks, the torchscript judge)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.oracle.judge import judge
from aliasfuzz.oracle.verdict import Verdict


@torch.library.custom_op("aliasfuzz_test_judge::halve_", mutates_args=("t",))
def halve_(t: torch.Tensor) -> None:
    t.mul_(0.5)


def test_ok_program():
    def f(x):
        y = x.sin()
        halve_(y)
        return y.cos()

    j = judge(f, "inductor-reinplace", inputs=lambda: (torch.arange(6.0),))
    assert j.verdict is Verdict.OK, j.diff
    assert [c.name for c in j.checks] == ["values", "inputs", "aliasing", "requires_grad", "grads", "exceptions"]
    assert set(j.ground_truth.values()) == {"safe"}


def test_missed_reinplace_is_confirmed_by_forcing_it():
    # PyTorch issue #131192 (case b19): v1 keeps a clone for a row of an input.
    def f(x):
        halve_(x[1])

    j = judge(f, "inductor-reinplace", {"auto_functionalized_v2": False},
              inputs=lambda: (torch.arange(12.0).reshape(3, 4),))
    assert j.verdict is Verdict.MISSED_REINPLACE, j.diff
    (claim,) = [c for c in j.claims if c.claim is not None]
    assert claim.confirmation.confirmed and claim.confirmation.runs == 2


@pytest.fixture
def reinplace_everything(monkeypatch):
    """A seeded fault: Inductor's reinplace core, then every declined candidate in place."""
    from torch._inductor.fx_passes import reinplace as rp

    from aliasfuzz.oracle._capture import _force, _reinplaced
    from aliasfuzz.oracle.candidates import candidates

    original = rp.reinplace_inplaceable_ops_core

    def mutant(graph):
        original(graph)
        for c in candidates(graph):
            if not _reinplaced(c):
                _force(c)

    monkeypatch.setattr(rp, "reinplace_inplaceable_ops_core", mutant)


def _index_inputs():
    return (torch.arange(4.0), torch.tensor([1]), torch.tensor([9.0]))


def test_unconfirmable_claim_is_unknown_not_a_finding(reinplace_everything):
    # y is read after the write (unsafe by the model), but only through a predicate that
    # holds for any finite values: no run can show the difference, so the claim stays
    # unconfirmed and the verdict is unknown. ("y.sum() * 0" was the read before the fast
    # path ran Inductor's joint-graph passes, whose patterns fold it away.)
    def f(x, i, v):
        y = x * 2
        return y.index_put((i,), v), (y == y).all()

    j = judge(f, "inductor-reinplace", inputs=_index_inputs)
    assert j.verdict is Verdict.UNKNOWN, j.diff
    (claim,) = [c for c in j.claims if c.claim is not None]
    assert claim.claim is Verdict.UNSAFE_REINPLACE and not claim.confirmation.confirmed


def test_mutant_pass_that_reinplaces_everything_is_caught(reinplace_everything):
    def f(x, i, v):
        y = x * 2
        return y.index_put((i,), v), y

    j = judge(f, "inductor-reinplace", inputs=_index_inputs)
    assert j.verdict is Verdict.MISCOMPILE and j.check == "values", j.diff
    (bad,) = [c for c in j.claims if c.truth.status == "unsafe"]
    assert bad.decision.reinplaced and bad.truth.witness.reader == "output"
    assert "witness" in j.diff


def test_index_put_reading_its_own_values_is_reinplaced_unsafely():
    # Found by this oracle on torch 2.13: the pass ignores the node's own reads, writes
    # index_put in place while its values alias self, and the in-place op refuses to run.
    def f(x, i):
        y = x * 1
        return y.index_put((i,), y[0:1]) + 1

    j = judge(f, "inductor-reinplace", inputs=lambda: (torch.arange(4.0), torch.tensor([2])))
    assert j.verdict is Verdict.CRASH, j.diff
    (claim,) = [c for c in j.claims if c.truth.status == "unsafe"]
    assert claim.decision.reinplaced and claim.truth.witness.rule == 1


def test_bad_subject_is_a_user_error():
    with pytest.raises(InvalidArgument):
        judge(42, "inductor-reinplace")
    with pytest.raises(InvalidArgument):
        judge(lambda x: x, "inductor-reinplace")  # no inputs


def test_findings_carry_witness_and_a_stable_signature():
    from aliasfuzz.oracle.findings import from_judgement

    def f(x):
        halve_(x[1])

    def run():
        return judge(f, "inductor-reinplace", {"auto_functionalized_v2": False},
                     inputs=lambda: (torch.arange(12.0).reshape(3, 4),))

    a, b = from_judgement(run()), from_judgement(run())
    assert a is not None and a.verdict == "missed-reinplace" and a.check == "candidates"
    assert a.signature == b.signature
    assert a.decisions and a.decisions[0]["truth"] == "safe"
    ok = judge(lambda x: x + 1, "inductor-reinplace", inputs=lambda: (torch.ones(2),))
    assert from_judgement(ok) is None


def _one_input(body, outputs, numel=4):
    return Program(
        storages=(StorageSpec("s0", numel),),
        inputs=(TensorSpec("x", "s0", (numel,), (1,)),),
        body=tuple(body),
        outputs=outputs,
    )


def test_fx_reinplace_rejecting_a_mutable_custom_op_is_unsupported_not_a_crash():
    p = _one_input([Op("sin", ("x",), {}, ("y",)), Op("fz.add_one_", ("y",), {}, ())], ("y",))
    j = judge(p, "fx-reinplace")
    assert (j.verdict, j.check) == (Verdict.UNSUPPORTED, "unsupported")
    assert not j.verdict.is_finding and "custom ops" in j.explanation
    assert j.explanation.startswith("functionalize-mutable-custom-op: ")
    # the same program is judged normally where the pipeline supports it
    assert judge(p, "aot_eager").verdict is Verdict.OK


def test_fx_reinplace_aliasing_waiver_is_noted_and_other_checks_still_count():
    p = _one_input([Op("add_.Scalar", ("x",), {"other": 1.0}, ("y",))], ("y",))
    j = judge(p, "fx-reinplace")
    assert j.verdict is Verdict.OK
    assert [c.name for c in j.checks if not c.passed] == ["aliasing"]
    assert any(f.startswith("aliasing waived for fx-reinplace") for f in j.filtered)
    # the waiver is per pipeline: aot_eager keeps the output an alias of x, and is judged so
    assert all(c.passed for c in judge(p, "aot_eager").checks)


def test_torchscript_runs_are_judged_per_call_with_invariants():
    seed = Path(__file__).resolve().parents[2] / "corpus" / "seeds"
    b23 = Program.loads((seed / "b23_script_rotating_buffers.json").read_text())
    j = judge(b23, "torchscript")
    assert (j.verdict, j.check) == (Verdict.MISCOMPILE, "torchscript")
    assert "values differ" in j.explanation
    ok = _one_input([Op("sin", ("x",), {}, ("y",))], ("y",))
    assert judge(ok, "torchscript").verdict is Verdict.OK


def test_returned_scatter_into_an_input_would_alias_it_so_it_is_unsafe():
    # Writing the scatter into x in place would return an alias of x where eager returns
    # fresh memory (PyTorch #198094, case b03): rule 5. Found as `unknown` (forcing the
    # reinplace disagreed on aliasing) before the rule existed; empty inputs included.
    for numel, shape in ((12, (3, 4)), (0, (0, 4))):
        p = Program(
            storages=(StorageSpec("s0", numel), StorageSpec("s1", 3 * max(numel // 4, 0))),
            inputs=(
                TensorSpec("x", "s0", shape, (4, 1)),
                TensorSpec("y", "s1", (shape[0], 3), (3, 1)),
            ),
            body=(
                Op("neg", ("y",), {}, ("v0",)),
                Op("slice_scatter", ("x", "v0"), {"dim": 1, "start": 0, "end": 3, "step": 1}, ("v1",)),
            ),
            outputs=("v1",),
        )
        j = judge(p, "inductor-reinplace")
        assert j.verdict is Verdict.OK, j.explanation
        (claim,) = [c for c in j.claims if c.decision.kind == "scatter"]
        assert claim.truth.status == "unsafe" and claim.truth.witness.rule == 5
        assert not claim.decision.reinplaced

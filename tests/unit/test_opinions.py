"""The second eager opinion (oracle/opinions.py): a finding whose eager reference depends on
determinism, the intra-op thread count or the device is ``invalid-program`` /
``undefined-eager``; an opinion that cannot run keeps the first verdict; ok runs pay nothing.

Eager results that depend on those settings are hard to build from stock CPU ops, so the
programs here use custom ops that read ``torch.are_deterministic_algorithms_enabled()`` /
``torch.get_num_threads()`` or raise like PyTorch's own nondeterministic ops, and a pipeline
run (an ``Execution``) that disagrees with eager on purpose, so that the verdict before the
review is a finding. The device opinion is injected (no GPU here): ``tests/gpu`` has the
real one.
"""

from __future__ import annotations

import torch

from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.oracle import opinions
from aliasfuzz.oracle.judge import judge
from aliasfuzz.passes.execution import Execution
from aliasfuzz.report.data import rejection_reason, undefined_eager_counts


@torch.library.custom_op("aliasfuzz_opinions::det_probe", mutates_args=())
def det_probe(x: torch.Tensor) -> torch.Tensor:
    return x + (1.0 if torch.are_deterministic_algorithms_enabled() else 0.0)


@torch.library.custom_op("aliasfuzz_opinions::threads_probe", mutates_args=())
def threads_probe(x: torch.Tensor) -> torch.Tensor:
    return x + (1.0 if torch.get_num_threads() == 1 else 0.0)


@torch.library.custom_op("aliasfuzz_opinions::no_det_impl", mutates_args=())
def no_det_impl(x: torch.Tensor) -> torch.Tensor:
    # what PyTorch's nondeterministic kernels do under use_deterministic_algorithms(True)
    torch._prims_common.alert_not_deterministic("aliasfuzz_opinions::no_det_impl")
    return x * 2


def _inputs():
    return (torch.arange(4.0),)


def _wrong(fn) -> Execution:
    """A pipeline run that returns eager's outputs plus 100: a ``miscompile`` (values)."""
    ins = _inputs()
    out = fn(*_inputs())
    return Execution("aot_eager", "cpu", outputs=(out + 100,), inputs_after=ins, aliases={"out0": ()})


def _judge(fn):
    return judge(fn, _wrong(fn), inputs=_inputs)


#: On a GPU host every finding also gets eager on the other device (oracle/opinions.py),
#: which agrees for these CPU programs.
OTHER = [("other-device", "agree")] if torch.cuda.is_available() else []


def test_result_that_depends_on_determinism_is_undefined_eager():
    j = _judge(lambda x: det_probe(x))
    assert (j.verdict.value, j.check) == ("invalid-program", "undefined-eager")
    assert [(o.name, o.status) for o in j.opinions] == [("deterministic", "disagree")] + OTHER
    assert j.explanation.startswith("eager disagrees with its deterministic single-thread run; ")
    assert "first verdict miscompile (values)" in j.explanation
    assert not torch.are_deterministic_algorithms_enabled()  # restored


def test_result_that_depends_on_the_thread_count_is_undefined_eager():
    before = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        j = _judge(lambda x: threads_probe(x))
        assert torch.get_num_threads() == 2  # restored after the single-thread opinion
    finally:
        torch.set_num_threads(before)
    assert (j.verdict.value, j.check) == ("invalid-program", "undefined-eager")


def test_a_deterministic_program_keeps_its_finding():
    j = _judge(lambda x: x * 3)
    assert (j.verdict.value, j.check) == ("miscompile", "values")
    assert [(o.name, o.status) for o in j.opinions] == [("deterministic", "agree")] + OTHER


def test_op_without_a_deterministic_implementation_is_unavailable_not_a_disagreement():
    j = _judge(lambda x: no_det_impl(x))
    assert (j.verdict.value, j.check) == ("miscompile", "values")
    assert [(o.name, o.status) for o in j.opinions] == [("deterministic", "unavailable")] + OTHER
    assert "second opinion unavailable (deterministic: RuntimeError" in j.explanation
    assert j.explanation.endswith("first verdict kept")


def test_ok_runs_run_no_opinion(monkeypatch):
    calls = []
    monkeypatch.setattr(opinions, "second_opinions", lambda *a, **k: calls.append(a) or [])
    ins = _inputs()
    ok = Execution("aot_eager", "cpu", outputs=(ins[0] * 3,), inputs_after=ins, aliases={"out0": ()})
    j = judge(lambda x: x * 3, ok, inputs=_inputs)
    assert j.verdict.value == "ok" and j.opinions == [] and calls == []


class _Judgement:
    """The bits of a Judgement that :func:`opinions.review` reads and writes."""

    def __init__(self, eager: EagerResult):
        from aliasfuzz.oracle.verdict import Verdict

        self.verdict, self.check, self.explanation = Verdict.MISCOMPILE, "values", "first"
        self.eager, self.opinions = eager, []


def _review(monkeypatch, other_value: float, eager_value: float = 1.0):
    """Review a miscompile whose eager output is ``eager_value``; the injected "other
    device" (cuda, as on a GPU host) computes ``other_value``, the deterministic run agrees."""
    monkeypatch.setattr(opinions, "other_device", lambda device: "cuda")

    def run_on(dev):
        v = other_value if dev == "cuda" else eager_value
        return EagerResult((torch.tensor([v]),), (), {"out0": ()})

    j = _Judgement(run_on("cpu"))
    return opinions.review(j, None, run_on, [], "cpu")


def test_only_the_other_device_catches_a_device_dependent_result(monkeypatch):
    j = _review(monkeypatch, other_value=2.0)
    assert (j.verdict.value, j.check) == ("invalid-program", "undefined-eager")
    assert [(o.name, o.device, o.status) for o in j.opinions] == [
        ("deterministic", "cpu", "agree"), ("other-device", "cuda", "disagree"),
    ]
    assert j.explanation.startswith("eager disagrees with eager on cuda; values: out0")


def test_rounding_differences_between_devices_are_excused(monkeypatch):
    j = _review(monkeypatch, other_value=1.0 + 1e-7)
    assert j.verdict.value == "miscompile"
    assert [o.status for o in j.opinions] == ["agree", "agree"]


def test_campaign_counts_undefined_eager_by_opinion(monkeypatch):
    from aliasfuzz.campaign._judge import _CLAIMS  # noqa: F401 - the outcome format's home

    dev_only = _review(monkeypatch, other_value=2.0)
    outcome = {"verdict": dev_only.verdict.value, "check": dev_only.check,
               "explanation": dev_only.explanation,
               "opinions": [o.to_json() for o in dev_only.opinions]}
    both = dict(outcome, opinions=[dict(o, status="disagree") for o in outcome["opinions"]])
    kept = {"verdict": "miscompile", "check": "values", "opinions": outcome["opinions"]}
    never = {"verdict": "ok", "check": None}
    tasks = [{"pipeline": "inductor", "outcome": o} for o in (outcome, outcome, both, kept, never)]
    assert undefined_eager_counts(tasks) == {
        "inductor": {"reviewed": 4, "reviewed-other-device": 4, "runs": 3, "deterministic": 1, "other-device": 3,
                     "only-deterministic": 0, "only-other-device": 2},
    }
    assert rejection_reason(outcome) == "undefined-eager: eager disagrees with eager on cuda"


def test_deterministic_mode_and_threads_are_restored_after_an_error():
    torch.use_deterministic_algorithms(False)
    before = torch.get_num_threads()
    try:
        with opinions.deterministic_one_thread():
            assert torch.are_deterministic_algorithms_enabled() and torch.get_num_threads() == 1
            raise KeyError("boom")
    except KeyError:
        pass
    assert not torch.are_deterministic_algorithms_enabled()
    assert torch.get_num_threads() == before


def test_moved_inputs_keep_layout_and_aliasing():
    base = torch.arange(12.0)
    a, b = base.as_strided((2, 3), (1, 2), 1), base[4:8]
    ma, mb = opinions.moved((a, b, 7), "cpu")[:2]
    assert (ma.shape, ma.stride(), ma.storage_offset()) == (a.shape, a.stride(), a.storage_offset())
    assert ma.untyped_storage().data_ptr() == mb.untyped_storage().data_ptr()
    assert ma.untyped_storage().data_ptr() != base.untyped_storage().data_ptr()
    assert torch.equal(ma, a) and torch.equal(mb, b)

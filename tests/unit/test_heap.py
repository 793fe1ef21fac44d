"""oracle.heap: a worker's death in aliasfuzz after glibc found the heap corrupted, shown
(or not) to be the pipeline's by running it alone in child interpreters, eager as control."""

from __future__ import annotations

import json
from pathlib import Path

from aliasfuzz.campaign import pool as pool_mod
from aliasfuzz.campaign.driver import confirmed
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle import heap

DATA = Path(__file__).resolve().parents[1] / "data"

#: What worker.attribute_death returned for program 1428 of the twelfth campaign.
SUMMARY = ("worker died (signal:SIGABRT): glibc found the heap corrupted ('malloc(): "
           "unaligned tcache chunk detected') while aliasfuzz ran (harness; innermost frame "
           "_ops.py:875 in __call__); the corrupting write came earlier in the process, most "
           "likely from the system under test (an out-of-bounds write)")
INTERNAL = {"internal_error": SUMMARY + "\nworker log ...", "summary": SUMMARY,
            "check": "signal:SIGABRT", "seconds": 1.0}


def _program(name: str) -> Program:
    return Program.from_json(json.loads((DATA / name).read_text()))


def test_a_death_heap_corruption_may_explain_is_asked_about_wherever_it_died():
    assert heap.may_be_corruption(INTERNAL)
    # a segfault in aliasfuzz is asked about too (a corrupted pointer can fault before
    # glibc looks: torch 2.11 on the H200 host); an exception in aliasfuzz is not
    segv = {**INTERNAL, "summary": "worker died (signal:SIGSEGV) in aliasfuzz (harness)",
            "check": "signal:SIGSEGV"}
    assert heap.may_be_corruption(segv)
    raised = {"internal_error": "Traceback ...", "summary": "KeyError", "check": None}
    assert not heap.may_be_corruption(raised)
    # a death in the system under test names it too (often the eager run after the
    # pipeline's: glibc notices late); one already confirmed is not asked again
    sut = {"verdict": "crash", "check": "signal:SIGABRT", "explanation": (
        "worker died (signal:SIGABRT) while running the program (in the system under test: "
        "eager): glibc found the heap corrupted ('malloc(): unaligned tcache chunk "
        "detected'), an out-of-bounds write")}
    assert heap.may_be_corruption(sut) and not heap.may_be_corruption({**sut, "heap": "2/3"})
    assert not heap.may_be_corruption({"verdict": "crash", "check": "signal:SIGSEGV",
                                   "explanation": "worker died (signal:SIGSEGV)"})
    # a worker killed by the OOM killer or a timeout is not asked about
    assert not heap.may_be_corruption({**INTERNAL, "summary": "worker died (signal:SIGKILL)",
                                       "check": "signal:SIGKILL"})


def _children(monkeypatch, pipeline_deaths, eager_deaths=()):
    """run_isolated answering the pipeline's runs, then eager's, from the given lists
    (None: the child survived)."""
    from aliasfuzz.fuzz import isolated

    asked: list[str] = []
    answers = {"pipeline": list(pipeline_deaths), "eager": list(eager_deaths)}

    def fake(target, args, **_k):
        asked.append(args[1])
        got = answers["eager" if args[1] == "eager" else "pipeline"]
        return got.pop(0) if got else None

    monkeypatch.setattr(isolated, "run_isolated", fake)
    # the wrapper's static check (its own child) is asked first: here it shows nothing
    monkeypatch.setattr(heap, "wrapper_out_of_bounds", lambda *a: [])
    return asked


def test_signals_sent_from_outside_never_confirm_heap_corruption(monkeypatch):
    # the fresh user's forgery: SIGABRTs sent to the children, no glibc message
    from aliasfuzz.fuzz.isolated import Died

    p = _program("heap/s20261206-1428.json")
    forged = Died("signal SIGABRT", "Fatal Python error: Aborted\n")
    asked = _children(monkeypatch, [forged] * heap.TRIES)
    assert heap.confirm(p, "inductor", "cpu", {}, INTERNAL) is None
    assert asked == ["inductor"] * heap.TRIES
    # one real death is not enough either: a finding needs two
    glibc = Died("signal SIGABRT", "malloc(): unaligned tcache chunk detected\n")
    _children(monkeypatch, [glibc])
    assert heap.confirm(p, "inductor", "cpu", {}, INTERNAL) is None
    # two, and eager survives: confirmed, glibc's message in the explanation
    asked = _children(monkeypatch, [None, glibc, Died("signal SIGSEGV")])
    out = heap.confirm(p, "inductor", "cpu", {}, INTERNAL)
    assert out is not None and out["heap"] == "2/3" and out["check"] == "signal:SIGABRT"
    assert "malloc(): unaligned tcache chunk detected" in out["explanation"]
    assert asked == ["inductor"] * 3 + ["eager"] * heap.EAGER_TRIES
    # eager killed, by anything: withheld
    _children(monkeypatch, [glibc, glibc], [Died("signal SIGKILL")])
    assert heap.confirm(p, "inductor", "cpu", {}, INTERNAL) is None


def test_twelfth_campaign_program_1428_is_shown_by_its_wrappers_out_of_bounds_view():
    # permute / fz.halve_ / as_strided_scatter / fz.copy_into / index_copy_ on an input at
    # offset 57 with strides (50, 5, 2): Inductor replays the input's absolute offset on a
    # 68-element buffer of its own (the family of corpus crash-lowering-5fcbc5cdc0); caught
    # as the generated wrapper makes the view, deterministically, no eager control needed
    out = heap.confirm(_program("heap/s20261206-1428.json"), "inductor", "cpu", {}, INTERNAL)
    assert out is not None and (out["verdict"], out["check"], out["heap"]) == (
        "crash", "out-of-bounds", "static")
    assert out["out_of_bounds"] == [
        "Inductor's wrapper made reinterpret_tensor(buf, (2, 2, 4), (50, 2, 5), 57) of a "
        "storage of 68 elements, reaching elements 57 to 124: out of bounds"]
    assert out["explanation"].startswith("inductor writes out of bounds: Inductor's wrapper")
    # dynamic shapes (a campaign marks some programs so): the sizes the wrapper computed
    dyn = heap.confirm(_program("heap/s20261206-1428.json"), "inductor", "cpu",
                       {"dynamic": True}, INTERNAL)
    assert dyn is not None and dyn["out_of_bounds"] == out["out_of_bounds"]
    assert out["explanation"].endswith(heap.DIED_OF + SUMMARY)  # the worker's death last


def test_twelfth_campaign_program_1428_corrupts_the_heap_under_inductor_alone(monkeypatch):
    # the same program asked the other way, as one whose wrapper shows nothing is: the
    # worker died later building inputs (internal error); alone, with glibc checking the
    # heap, the compiled program kills its process
    monkeypatch.setattr(heap, "wrapper_out_of_bounds", lambda *a: [])
    out = heap.confirm(_program("heap/s20261206-1428.json"), "inductor", "cpu", {}, INTERNAL)
    # glibc aborts (SIGABRT) or the corrupted pointer faults first (SIGSEGV: torch 2.11 on
    # the H200 host): either is the death
    assert out is not None and out["verdict"] == "crash" and out["check"].startswith("signal:")
    assert "inductor corrupts the heap" in out["explanation"]
    assert "eager alone did not in 3" in out["explanation"] and out["heap"][0] == "2"


def test_a_program_that_does_not_corrupt_the_heap_is_not_confirmed():
    # index_copy(x, idx, x): wrong values under Inductor, but every write in bounds
    p = _program("blame/miscompile-lowering-7e27ad2854.json")
    assert heap.wrapper_out_of_bounds(p, "inductor", "cpu", {}) == []
    assert heap.confirm(p, "inductor", "cpu", {}, INTERNAL) is None


def test_the_pool_confirms_a_heap_death_without_a_worker_and_keeps_it_when_unshown(
    tmp_path, monkeypatch
):
    crash = {"verdict": "crash", "check": "signal:SIGABRT", "explanation": "corrupts"}
    answers = [crash, None]
    monkeypatch.setattr(pool_mod, "confirm_heap", lambda *a, **k: answers.pop(0))
    pool = pool_mod.Pool(CampaignOptions(programs=1, workers=1), tmp_path / "w")
    p = _program("blame/miscompile-lowering-7e27ad2854.json")
    pool.submit(0, ("confirm", 4, "inductor", p, INTERNAL))
    pool.submit(1, ("confirm", 5, "inductor", p, INTERNAL))
    pool.submit(2, None)

    class NoWorker:  # a heap death is never re-run in a worker (it would die in aliasfuzz)
        def run(self, task):
            raise AssertionError("no worker task")

        def close(self):
            pass

    pool._serve(NoWorker())
    first = pool.results.get_nowait()
    assert first[:3] == ("confirmed", 4, "inductor") and first[4]["verdict"] == "crash"
    assert "crash.rerun" in first[4]["costs"]
    out = confirmed(INTERNAL, {k: v for k, v in first[4].items() if k != "costs"})
    assert out["verdict"] == "crash" and out["first"]["check"] == "signal:SIGABRT"
    second = pool.results.get_nowait()
    assert second[4]["internal_error"] == INTERNAL["internal_error"]  # unshown: it stands


def test_a_heap_finding_is_shrunk_with_each_candidate_confirmed_in_child_interpreters(
    tmp_path, monkeypatch
):
    # campaign seed 12's program 20 (corpus/crash-lowering-5fcbc5cdc0) was written with all
    # 11 statements: a heap finding was not shrunk. Its candidates are asked as the finding
    # was (here a stand-in for the children: corruption iff the custom op stays), never in
    # a worker, and the finding's own confirmation is its replay (not asked again)
    p = _program("heap/s20261206-1428.json")
    asked: list[str] = []

    def children(program, pipeline, device, options, first, static_only=False):
        assert not static_only  # a finding glibc showed: its candidates are asked so too
        asked.append(program.dumps())
        assert first == {"summary": SUMMARY}  # the worker's death, not the whole explanation
        if any(o.op == "fz.copy_into" for o in program.body):  # the fault, not glibc's abort
            return {"verdict": "crash", "check": "signal:SIGSEGV", "explanation": "corrupts",
                    "diff": "", "heap": "2/2"}
        return None

    monkeypatch.setattr(pool_mod, "confirm_heap", children)
    found = {"verdict": "crash", "check": "signal:SIGABRT", "heap": "2/3",
             "explanation": "inductor corrupts the heap ... The worker had died of it: " + SUMMARY}
    pool = pool_mod.Pool(CampaignOptions(programs=1, workers=1), tmp_path / "w")
    monkeypatch.setattr(pool, "_blame", lambda *a: {"stage": None, "stages": [], "trail": []})

    class NoWorker:
        def run(self, task):
            raise AssertionError("a heap finding's candidate ran in a worker")

    kind, _, _, (_, small, spent, _, _, _), out = pool._shrink(NoWorker(), 0, "inductor", p, found)
    assert kind == "shrunk" and p.dumps() not in asked
    assert len(small.body) < len(p.body) and any(o.op == "fz.copy_into" for o in small.body)
    assert out["check"] == "signal:SIGABRT" and out["heap"] == "2/2"  # either signal is one failure
    assert 1 < spent == len(asked) + 1 <= pool_mod.HEAP_SHRINK_BUDGET


def test_a_candidate_killing_its_worker_in_aliasfuzz_is_no_internal_error_only_for_a_death_finding(
    tmp_path,
):
    # campaign 26: shrinking the SIGSEGV finding 20e8d6ba4b, a candidate's worker died in the
    # oracle's eager run (a heap the compiled code had corrupted) and was counted as
    # aliasfuzz's internal error
    died = {**INTERNAL, "check": "signal:SIGSEGV", "summary": SUMMARY.replace(
        "glibc found the heap corrupted ('malloc(): unaligned tcache chunk detected')", "")}
    assert heap.HEAP_MESSAGE not in died["summary"]  # a fault, not glibc's abort

    class Dying:
        def run(self, task):
            return dict(died)

    pool = pool_mod.Pool(CampaignOptions(programs=1, workers=1), tmp_path / "w")
    p = _program("blame/miscompile-lowering-7e27ad2854.json")
    segv = {"verdict": "crash", "check": "signal:SIGSEGV"}
    assert pool._shrink_step(Dying(), p, "inductor", 3, segv) == {
        "verdict": "internal-error", "check": "signal:SIGSEGV"}
    assert pool.results.empty()
    # shrinking a value finding, the same death is aliasfuzz's until shown otherwise
    values = {"verdict": "miscompile", "check": "values"}
    assert pool._shrink_step(Dying(), p, "inductor", 3, values) == {"verdict": "internal-error"}
    assert pool.results.get_nowait()[:3] == ("internal", 3, "inductor")


def test_a_finding_shown_by_its_wrapper_shrinks_its_candidates_by_the_wrapper_alone(
    tmp_path, monkeypatch
):
    # a static finding's candidate keeps the bug only with an out-of-bounds view of its own
    # (static_only), and the shrink is not capped at HEAP_SHRINK_BUDGET: one child each
    p = _program("heap/s20261206-1428.json")
    asked: list[bool] = []

    def children(program, pipeline, device, options, first, static_only=False):
        asked.append(static_only)
        if any(o.op == "fz.copy_into" for o in program.body):
            return {"verdict": "crash", "check": "out-of-bounds", "explanation": "views",
                    "diff": "", "heap": "static"}
        return None

    monkeypatch.setattr(pool_mod, "confirm_heap", children)
    monkeypatch.setattr(pool_mod, "HEAP_SHRINK_BUDGET", 2)
    found = {"verdict": "crash", "check": "out-of-bounds", "heap": "static",
             "explanation": "inductor writes out of bounds: ... " + heap.DIED_OF + SUMMARY}
    pool = pool_mod.Pool(CampaignOptions(programs=1, workers=1, shrink_budget=40),
                         tmp_path / "w")
    monkeypatch.setattr(pool, "_blame", lambda *a: {"stage": None, "stages": [], "trail": []})

    class NoWorker:
        def run(self, task):
            raise AssertionError("a heap finding's candidate ran in a worker")

    kind, _, _, (_, small, spent, _, _, _), out = pool._shrink(NoWorker(), 0, "inductor", p, found)
    assert kind == "shrunk" and asked and all(asked)
    assert spent > 2  # past the glibc findings' cap
    assert len(small.body) < len(p.body) and out["heap"] == "static"


def test_the_confirmation_starts_no_child_past_its_seconds(monkeypatch):
    # fresh user 39's B7: 136 s of children for one death under a 120 s --timeout
    import time as _time

    from aliasfuzz.fuzz.isolated import Died

    p = _program("heap/s20261206-1428.json")
    glibc = Died("signal SIGABRT", "malloc(): unaligned tcache chunk detected\n")
    asked = _children(monkeypatch, [None, None, glibc, glibc])
    clock = iter(range(0, 1000, 10))  # each look at the clock: 10 s later
    monkeypatch.setattr(_time, "monotonic", lambda: float(next(clock)))
    # started at 0 with 25 s: children at 10 and 20, none at 30: not shown, no finding
    assert heap.confirm(p, "inductor", "cpu", {}, INTERNAL, seconds=25) is None
    assert asked == ["inductor"] * 2
    # without a bound the same answers confirm it
    asked = _children(monkeypatch, [None, None, glibc, glibc])
    out = heap.confirm(p, "inductor", "cpu", {}, INTERNAL)
    assert out is not None and out["heap"] == "2/4", out


def test_a_view_in_bounds_from_its_base_s_storage_offset_is_judged_on_its_values():
    # audit 45, b2717ee500: `add_one_(x1[1])` (a mutating custom op) on an input at storage
    # offset 2, dynamic shapes: the wrapper's reinterpret_tensor(x1, (), (), -s77) is storage
    # element 0, in bounds, read as absolute offset -2 and filed as an out-of-bounds write.
    # What is wrong is the element written (PyTorch #198068: sym_storage_offset lowered to 0)
    from aliasfuzz.campaign import _judge

    out = _judge.evaluate(_program("heap/relative-offset-b2717ee500.json"), "inductor", "cpu",
                          {"dynamic": True})
    assert (out["verdict"], out["check"]) == ("miscompile", "inputs"), out["explanation"]
    assert "out of bounds" not in out["explanation"]
    # static shapes, #198068's control in known.toml, give eager's values
    static = _judge.evaluate(_program("heap/relative-offset-b2717ee500.json"), "inductor", "cpu", {})
    assert static["verdict"] == "ok", static["explanation"]

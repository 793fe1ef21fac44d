"""Fresh user 33's B1: a fast-path finding blamed on two stages writes only the roots a
public API confirms.

On a CPU host full Inductor cannot run a user Triton kernel (``full: unsupported``). A
finding of the fast path blamed on ``functionalization`` is kept (its cut is
``aot_eager``'s own code); the second root, ``reinplace``, was filed as a new miscompile
(``miscompile-reinplace-c8852360b4``) whose repro exits 3 on the host that found it.
"""

from __future__ import annotations

from aliasfuzz.campaign.corpus import roots
from aliasfuzz.campaign.driver import confirmed_roots, dismissal
from tests.common.repro_cases import CASES

OUT = {"verdict": "miscompile", "check": "inputs", "explanation": "input x0: values differ"}
TRAIL = [["dynamo", "agrees"], ["functionalization", "departs (values: input x0)"],
         ["reinplace", "departs again (values: input x0)"]]


def _blame(full: str) -> dict:
    return {"stage": "functionalization", "stages": ["functionalization", "reinplace"],
            "trail": [list(t) for t in TRAIL], "full": full, "reason": ""}


def test_a_second_root_full_inductor_cannot_run_here_is_not_written():
    blame = _blame("unsupported")
    assert dismissal(OUT, "inductor-reinplace", blame) is None  # the finding is written
    kept = confirmed_roots(OUT, "inductor-reinplace", blame)
    assert kept["stages"] == ["functionalization"], kept
    stage, said = kept["trail"][-1]
    assert stage == "unconfirmed" and said.startswith("reinplace: not written: full torch."
                                                      "compile(backend='inductor') cannot run"), said
    program, _, _ = CASES["ok-aot_eager"]
    assert [r["stage"] for r in roots(program, OUT, "inductor-reinplace", kept)] == [
        "functionalization"]
    assert blame["stages"] == ["functionalization", "reinplace"]  # not changed in place


def test_a_second_root_a_public_api_shows_is_written():
    for full in ("reproduces", "hidden"):  # the reinplace pass's decision stands when hidden
        blame = _blame(full)
        assert confirmed_roots(OUT, "inductor-reinplace", blame) is blame
    # the same blame on full torch.compile's own pipeline: nothing to confirm
    assert confirmed_roots(OUT, "inductor", _blame("unsupported"))["stages"] == [
        "functionalization", "reinplace"]
    # a hidden second root of a pass the ground truth does not judge: harness only
    lowering = {**_blame("hidden"), "stages": ["functionalization", "post-grad:reorder_for_locality"]}
    assert confirmed_roots(OUT, "inductor-reinplace", lowering)["stages"] == ["functionalization"]


def test_a_frontend_finding_names_no_executor_in_its_headline():
    # fresh user 33: "[jit] TorchScript frontend ...: profiling call 0 (profiled): ..." above
    # a repro that runs the simple executor; the frontend's graph is every executor's
    from aliasfuzz.campaign._repro_words import title
    from tests.common.repro_cases import meta_v2

    program, _, _ = CASES["ok-aot_eager"]
    said = "profiling call 0 (profiled): input x1 after the call: values differ (max abs diff 1)"
    front = meta_v2(program, "torchscript", "miscompile", "torchscript", "ts-frontend",
                    explanation=said)
    assert title(front).endswith("from eager: input x1 after the call: values differ "
                                 "(max abs diff 1)"), title(front)
    legacy = meta_v2(program, "torchscript", "miscompile", "torchscript", "ts-optimizer",
                     explanation=said.replace("profiling", "legacy"))
    assert ": legacy call 0 (profiled): input x1" in title(legacy), title(legacy)


def test_a_frontend_crash_names_no_executor_in_its_headline():
    # audit 55, d176cf2a7f: "profiling call 0 (profiled) raised RuntimeError: ..." above a
    # repro that runs the simple executor (the miscompile's form alone was stripped)
    from aliasfuzz.campaign._repro_words import title
    from tests.common.repro_cases import meta_v2

    program, _, _ = CASES["ok-aot_eager"]
    said = "profiling call 0 (profiled) raised RuntimeError: output with shape [0, 1] doesn't match"
    front = meta_v2(program, "torchscript", "crash", "torchscript", "ts-frontend", explanation=said)
    assert title(front).endswith("where eager does not: RuntimeError: output with shape [0, 1] "
                                 "doesn't match"), title(front)

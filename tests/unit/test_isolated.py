"""aliasfuzz.fuzz.isolated: a step in a child interpreter, its answer or how it died."""

from __future__ import annotations

import torch

from aliasfuzz.fuzz import isolated
from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.fuzz.isolated import Died, portable_error, run_isolated


class BackendCompilerFailed(Exception):  # as torch._dynamo.exc's: not a built-in type
    pass


def test_a_chained_error_keeps_type_names_and_messages():
    try:
        try:
            raise KeyError("inner")
        except KeyError as inner:
            raise BackendCompilerFailed("backend='inductor' raised:") from inner
    except Exception as e:
        outer = e
    copy = portable_error(outer)
    assert type(copy).__name__ == "BackendCompilerFailed" and isinstance(copy, RuntimeError)
    assert str(copy) == str(outer)
    assert type(copy.__cause__) is KeyError and str(copy.__cause__) == str(KeyError("inner"))


def test_a_result_crosses_back_with_its_layout_sharing_and_error(tmp_path):
    base = torch.arange(12.0)
    view = base.view(3, 4).t()
    res = EagerResult((view,), (base,), {"out0": ("x0",)}, error=ValueError("boom"))
    path = tmp_path / "a.pt"
    torch.save(isolated._walk([res], BaseException, isolated._chain), path)
    back = isolated._walk(torch.load(path, weights_only=False), isolated._Chain,
                          isolated._rebuild)[0]
    assert back.outputs[0].stride() == (1, 4)
    assert back.outputs[0].untyped_storage().data_ptr() == \
        back.inputs_after[0].untyped_storage().data_ptr()
    assert type(back.error) is ValueError and str(back.error) == "boom"


def test_a_child_killed_by_a_signal_is_a_death_not_an_answer():
    assert run_isolated("os:abort") == Died("signal SIGABRT")


def test_a_child_past_its_timeout_is_killed():
    assert run_isolated("time:sleep", (60,), timeout=5) == Died("timeout after 5 s")


def test_a_step_that_raises_is_a_harness_error_with_its_traceback():
    try:
        run_isolated("operator:truediv", (1, 0))
    except RuntimeError as e:
        assert "ZeroDivisionError" in str(e)
    else:
        raise AssertionError("a raising step must raise")


def test_a_step_s_answer_comes_back():
    got = run_isolated("torch:arange", (6,))
    assert torch.equal(got, torch.arange(6))

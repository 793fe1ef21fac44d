"""Metadata-mutating in-place ops (``t_``, ``transpose_``, ``squeeze_``, ``unsqueeze_``,
``as_strided_``: fuzz/ops/metadata.py) and the rule that retires the names of the object
they change (fuzz/validate.py).

After ``v1 = x0.t_()`` the name ``x0`` would mean another layout than the IR says, so
validation refuses any later read or return of it and of every name that may be the same
object (``retires``: equal abstract values, e.g. ``x0.contiguous()`` of a contiguous
``x0``), while a distinct view taken before (``x0.t()``) keeps its meaning.
"""

from __future__ import annotations

import pytest

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.layout_contract import LAYOUT_READOUT
from aliasfuzz.fuzz.ops.core import NoEagerMeaning
from aliasfuzz.fuzz.ops.metadata import OPS
from aliasfuzz.fuzz.sample import generate
from aliasfuzz.fuzz.validate import infer
from tests.common.validation import run_unchecked

ROWS = {d.name for d in OPS}


def _prog(*body: Op, outputs=(), shape=(2, 3), stride=(3, 1), offset=0, numel=6) -> Program:
    return Program(
        storages=(StorageSpec("s0", numel),),
        inputs=(TensorSpec("x0", "s0", shape, stride, offset),),
        body=tuple(body),
        outputs=tuple(outputs),
    )


def test_result_has_the_new_layout_and_the_old_name_is_retired():
    typed = infer(_prog(Op("t_", ("x0",), {}, ("v0",)), outputs=("v0",)))
    assert typed.values["v0"].shape == (3, 2) and typed.values["v0"].stride == (1, 3)
    assert typed.retired == {"x0"}
    assert "x0" in typed.unreturnable and "v0" not in typed.retired


def test_a_later_read_of_a_retired_name_is_refused():
    p = _prog(Op("t_", ("x0",), {}, ("v0",)), Op("add_.Scalar", ("x0",), {"other": 1.0}, ("v1",)))
    with pytest.raises(InvalidArgument, match=r"'x0' is retired: statement 0"):
        infer(p)


def test_returning_a_retired_name_is_refused():
    with pytest.raises(InvalidArgument, match=r"output 'x0' is retired"):
        infer(_prog(Op("unsqueeze_", ("x0",), {"dim": 0}, ("v0",)), outputs=("x0",)))


def test_every_name_of_the_object_is_retired():
    # x0 is contiguous: contiguous() returns x0 itself, add_ returns its argument
    p = _prog(
        Op("contiguous", ("x0",), {}, ("v0",)),
        Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",)),
        Op("squeeze_", ("v1",), {}, ("v2",)),
        Op("neg", ("v0",), {}, ("v3",)),
    )
    with pytest.raises(InvalidArgument, match=r"'v0' is retired"):
        infer(p)
    typed = infer(p.with_body(p.body[:3]))
    assert typed.retired == {"x0", "v0", "v1"}


def test_a_distinct_view_taken_before_keeps_its_meaning():
    p = _prog(
        Op("t", ("x0",), {}, ("v0",)),
        Op("unsqueeze_", ("x0",), {"dim": 0}, ("v1",)),
        Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v2",)),
        outputs=("v2", "v1"),
    )
    typed = infer(p)
    assert typed.retired == {"x0"}
    eager = run_eager(p)
    assert eager.error is None
    assert tuple(eager.inputs_after[0].shape) == (1, 2, 3)
    assert tuple(eager.outputs[1].stride()) == typed.values["v1"].stride


def test_as_strided_in_place_follows_the_layout_readout_rule():
    # an intermediate at storage offset 1 is not dense from 0: as_strided_'s absolute
    # offset would address a storage compiled code need not keep
    p = _prog(
        Op("neg", ("x0",), {}, ("v0",)),
        Op("narrow", ("v0",), {"dim": 1, "start": 1, "length": 2}, ("v1",)),
        Op("as_strided_", ("v1",), {"size": [2], "stride": [1], "offset": 1}, ("v2",)),
    )
    with pytest.raises(NoEagerMeaning, match=LAYOUT_READOUT):
        infer(p)
    ok = p.with_body((p.body[0], Op("as_strided_", ("v0",), {"size": [2], "stride": [2], "offset": 1}, ("v2",))))
    assert infer(ok).values["v2"].stride == (2,)


def test_generated_programs_use_the_rows_and_never_a_retired_name():
    progs = generate(300, 11)
    used = [p for p in progs if any(op.op in ROWS for op in p.body)]
    assert len(used) >= 6, f"only {len(used)} of 300 programs use a metadata-mutating op"
    for p in used:
        typed = infer(p)  # raises on a retired read or return
        assert not typed.retired & set(p.outputs)
        eager = run_eager(p, make_inputs(p))
        assert eager.error is None, f"eager raised {eager.error!r}\n{p.dumps()}"


def _grad_prog(*body: Op, outputs=()) -> Program:
    return Program(
        storages=(StorageSpec("s0", 6),),
        inputs=(TensorSpec("x0", "s0", (2, 3), (3, 1), 0, requires_grad=True),),
        body=tuple(body), outputs=tuple(outputs),
    )


def test_detach_in_place_is_accepted_on_a_base_and_cuts_the_graph():
    p = _grad_prog(Op("mul.Scalar", ("x0",), {"other": 2.0}, ("v0",)),
                   Op("detach_", ("v0",), {}, ("v1",)), outputs=("v0", "v1"))
    typed = infer(p)
    assert typed.values["v1"] == typed.values["v0"] and not typed.retired  # layout unchanged
    eager = run_eager(p, make_inputs(p))
    assert eager.error is None
    assert [o.requires_grad for o in eager.outputs] == [False, False]  # what the check reads


@pytest.mark.parametrize("body", [
    # an input: refused (the eager reference builds an input that does not require grad
    # as a view of its storage; one that does is a detached leaf, refused all the same)
    (Op("detach_", ("x0",), {}, ("v0",)),),
    # a view of a base
    (Op("mul.Scalar", ("x0",), {"other": 2.0}, ("v0",)), Op("t", ("v0",), {}, ("v1",)),
     Op("detach_", ("v1",), {}, ("v2",))),
    # an in-place result: the base itself, but its name is not the storage's (refused, safe)
    (Op("mul.Scalar", ("x0",), {"other": 2.0}, ("v0",)),
     Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v1",)), Op("detach_", ("v1",), {}, ("v2",))),
], ids=["input", "view", "inplace-result"])
def test_detach_in_place_of_what_may_be_a_view_is_refused(body):
    p = _grad_prog(*body)
    with pytest.raises(InvalidArgument, match="may be a view"):
        infer(p)
    if len(body) > 1 and body[1].op == "t":  # eager refuses it too
        with pytest.raises(RuntimeError, match="Can't detach views in-place"):
            run_unchecked(p)



def test_generated_programs_detach_only_bases():
    progs = [p for p in generate(3000, 5) if any(op.op == "detach_" for op in p.body)]
    assert len(progs) >= 3, f"only {len(progs)} of 3000 programs use detach_"
    for p in progs:
        eager = run_eager(p, make_inputs(p))
        assert eager.error is None, f"eager raised {eager.error!r}\n{p.dumps()}"

"""The ``layout-readout`` rule (fuzz/layout_contract.py) and the PyTorch contracts it rests on.

Layout read as data by ``fz.storage_layout`` / ``fz.strides_of`` is valid only on program
inputs and clone results whose storage nothing wrote before (functionalization replaces a
written tensor); strides of size-1 dims never count. The audit's ``layout-readout`` false
positives are rejected by name; the genuine ``addcmul-int-through-fma`` entry, which reads
an unwritten input, and case b05's twin (a clone) stay valid.
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import preludes
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.layout_contract import LAYOUT_READOUT

ROOT = Path(__file__).resolve().parents[2]
NOT_FINDINGS = ROOT / "tests" / "data" / "not_findings"
LABELS = ROOT.parent / "shared" / "audit" / "labels.tsv"
#: the audit's layout-readout rows whose programs we hold (the others were never in corpus/)
LAYOUT_FALSE_POSITIVES = ["miscompile-fx-reinplace-47f5c75915", "miscompile-inductor-reinplace-3494a7ca5f"]


def _load(folder: Path) -> Program:
    return Program.loads((folder / "program.json").read_text())


def _prog(body, outputs, inputs=None):
    inputs = inputs or (TensorSpec("x", "s0", (2, 3), (3, 1)), TensorSpec("y", "s0", (3,), (1,), 6))
    return Program((StorageSpec("s0", 12),), tuple(inputs), tuple(body), tuple(outputs))


def _rejected(p: Program) -> str:
    with pytest.raises(InvalidArgument) as e:
        p.validate()
    return str(e.value)


# -- the PyTorch side of the contract --------------------------------------------------
def test_strides_of_reports_only_significant_strides():
    t = torch.empty(3, 1, 4).as_strided((3, 1, 4), (4, 99, 1))
    assert preludes.fz_strides_of(t).tolist() == [4, 0, 1]
    assert preludes.fz_strides_of(torch.empty(0, 5)).tolist() == [0, 0]
    # the same comparison PyTorch's own reference checks make (dims of length > 1 only)
    from torch._prims_common import check_significant_strides

    a, b = torch.empty(3, 1, 4), torch.empty(3, 1, 4).as_strided((3, 1, 4), (4, 99, 1))
    assert check_significant_strides(a, b, only_cuda=False)[0]
    assert preludes.fz_strides_of(a).tolist() == preludes.fz_strides_of(b).tolist()


@pytest.mark.parametrize("op", ["storage_layout", "strides_of"])
def test_layout_ops_are_tagged_needs_exact_strides_which_inductor_honours(op):
    from torch._inductor.lowering import constrain_to_fake_tensors, tag_to_layout_constraint
    from torch._library.utils import get_layout_constraint_tag

    overload = getattr(torch.ops.aliasfuzz, op).default
    assert get_layout_constraint_tag(overload) is torch.Tag.needs_exact_strides
    # Inductor's lowering maps the tag to "the strides of the traced (eager) values"
    assert tag_to_layout_constraint(torch.Tag.needs_exact_strides) is constrain_to_fake_tensors
    # and it is the default for untagged custom ops (the b05 case's own op relies on it)
    import torch._functorch.config as fconfig

    assert fconfig.custom_op_default_layout_constraint == "needs_exact_strides"


# -- the rule ----------------------------------------------------------------------------
@pytest.mark.parametrize("entry", LAYOUT_FALSE_POSITIVES)
def test_layout_readout_rejects_the_audited_false_positive(entry):
    why = _rejected(_load(NOT_FINDINGS / entry))
    assert why.startswith(f"statement 1: {LAYOUT_READOUT}: fz.storage_layout reads the layout of 'x0'")
    assert "after its storage was written" in why


def test_layout_readout_keeps_the_genuine_addcmul_finding_valid():
    # addcmul-int-through-fma reads an unwritten input only to produce int64 values
    from tests.common.audit import program_of

    program_of("miscompile-inductor-546ef8cf3a").validate()


def test_layout_readout_keeps_a_clone_result_valid():
    # case b05 (PyTorch #197489): Inductor must not drop a clone whose offset differs
    Program.loads(
        (ROOT / "corpus" / "seeds" / "b05_noop_clone_changes_storage_offset.json").read_text()
    ).validate()


@pytest.mark.parametrize("op", ["fz.storage_layout", "fz.strides_of"])
def test_layout_readout_accepts_unwritten_inputs_even_when_written_later(op):
    _prog([Op(op, ("x",), {}, ("l",)), Op("add_.Scalar", ("y",), {"other": 1.0}, ("y1",))],
          ["l"]).validate()


@pytest.mark.parametrize(
    ("body", "needle"),
    [
        # an input written through an aliased input before the read (synthetic base)
        ([Op("add_.Scalar", ("y",), {"other": 1.0}, ("y1",)),
          Op("fz.storage_layout", ("x",), {}, ("l",))], "after its storage was written"),
        # a view of an input: compiled code may rebuild it (a regenerated alias)
        ([Op("transpose", ("x",), {"dim0": 0, "dim1": 1}, ("t",)),
          Op("fz.strides_of", ("t",), {}, ("l",))], "neither a program input nor a clone"),
        # an intermediate of a functional op: its layout is the compiler's choice
        ([Op("sin", ("x",), {}, ("s",)), Op("fz.strides_of", ("s",), {}, ("l",))],
         "neither a program input nor a clone"),
        # a clone mutated before the read: functionalization replaces it
        ([Op("clone", ("x",), {}, ("c",)), Op("add_.Scalar", ("c",), {"other": 1.0}, ("c1",)),
          Op("fz.storage_layout", ("c",), {}, ("l",))], "after its storage was written"),
    ],
    ids=["aliased-input-written", "view-of-input", "intermediate", "written-clone"],
)
def test_layout_readout_rejects_layouts_no_contract_promises(body, needle):
    why = _rejected(_prog(body, ["l"]))
    assert f"{LAYOUT_READOUT}: " in why and needle in why


def test_generated_programs_read_layout_only_under_the_contract():
    from aliasfuzz.fuzz.sample import generate

    programs = generate(300, 0)
    reads = [(p, op) for p in programs for op in p.body if op.op in ("fz.storage_layout", "fz.strides_of")]
    assert reads, "the generator no longer produces layout reads at all"
    inputs_or_clones = 0
    for p, op in reads:
        p.validate()  # every generated program passes the rule
        clones = {o for s in p.body if s.op == "clone" for o in s.out}
        inputs_or_clones += op.args[0] in {t.name for t in p.inputs} | clones
    assert inputs_or_clones == len(reads)


@pytest.mark.skipif(not LABELS.is_file(), reason="the audit table is not checked out")
def test_every_audited_layout_readout_row_is_no_finding():
    with LABELS.open() as f:
        rows = [r for r in csv.DictReader(f, delimiter="\t") if r["root"] == "layout-readout"]
    assert len(rows) == 5
    for r in rows:
        assert not (ROOT / "corpus" / r["entry"]).exists(), f"{r['entry']} is still in corpus/"
        held = NOT_FINDINGS / r["entry"]
        if held.is_dir():  # the programs we hold are rejected by this rule
            assert f"{LAYOUT_READOUT}: " in _rejected(_load(held))


def _as_strided_of_a_view(size, stride, offset) -> Program:
    # x0 = arange(3)[:2] mutated, then an as_strided of it (second audit, 726c72ec63)
    return Program(
        (StorageSpec("s0", 3),),
        (TensorSpec("x0", "s0", (2,), (1,)),),
        (Op("add_.Scalar", ("x0",), {"other": 1.0}, ("v0",)),
         Op("as_strided", ("x0",), {"size": size, "stride": stride, "offset": offset}, ("v1",))),
        ("v1",),
    )


def test_as_strided_outside_its_source_is_a_layout_readout():
    unwritten = _as_strided_of_a_view([], [], 2)
    outside = unwritten.with_body(unwritten.body[1:], ("v1",))  # element 2 is not x0's
    why = _rejected(outside)
    assert f"{LAYOUT_READOUT}: as_strided reaches element 2 of the storage" in why
    assert _rejected(_as_strided_of_a_view([], [], 2)).startswith("statement 1: layout-readout")
    # even within x0: x0 was written, functionalization gave it a storage of its own
    assert "after its storage was written" in _rejected(_as_strided_of_a_view([2], [1], 0))
    unwritten = _as_strided_of_a_view([2], [1], 0)
    for size, stride, offset in [([], [], 1), ([2], [1], 0), ([2, 2], [0, 1], 0)]:
        step = Op("as_strided", ("x0",), {"size": size, "stride": stride, "offset": offset}, ("v1",))
        unwritten.with_body((step,), ("v1",)).validate()  # within an unwritten x0: kept


def test_as_strided_of_an_intermediate_off_offset_0_is_a_layout_readout():
    # eighth audit false positive d99d750b93: slice_scatter's result kept its input's
    # storage offset 318 in eager; v2.as_strided((), (), 328) read element 328 of it, which
    # functionalization's fresh result does not have (setStorage ... out of bounds)
    why = _rejected(_load(NOT_FINDINGS / "crash-functionalization-d99d750b93"))
    assert why.startswith(f"statement 2: {LAYOUT_READOUT}: as_strided of 'v2', an intermediate "
                          "at storage offset 318")
    # the same reads of an input's storage, or of an intermediate dense from offset 0, stay
    x = TensorSpec("x0", "s0", (2, 2), (2, 1), 0)
    body = (Op("add", ("x0", "x0"), {}, ("v0",)),
            Op("as_strided", ("v0",), {"size": [2], "stride": [1], "offset": 1}, ("v1",)))
    Program((StorageSpec("s0", 4),), (x,), body, ("v1",)).validate()
    at1 = TensorSpec("x0", "s0", (3,), (1,), 1)
    body = (Op("as_strided", ("x0",), {"size": [2], "stride": [1], "offset": 2}, ("v1",)),)
    Program((StorageSpec("s0", 4),), (at1,), body, ("v1",)).validate()


# -- writes through an as_strided view (third audit, crash-aot-c32458ee7d) ----------------
def _write_through(x: TensorSpec, numel: int, body) -> Program:
    return Program((StorageSpec("s1", numel),), (x,), tuple(body), ())


_AT3 = Op("as_strided", ("x1",), {"size": [], "stride": [], "offset": 3}, ("v0",))


def test_layout_readout_rejects_the_audited_write_through_as_strided():
    # x1: a 0-d input at storage offset 3; v0 = x1.as_strided((), (), 3); v0.add_(1.0):
    # functionalization's as_strided_scatter on a 1-element base of x1 is out of bounds
    why = _rejected(_load(NOT_FINDINGS / "crash-aot-c32458ee7d"))
    assert why.startswith(f"statement 1: {LAYOUT_READOUT}: add_.Scalar writes through 'v0', "
                          "an as_strided view of 'x1', which is not dense from storage offset 0")


def test_the_same_write_through_as_strided_of_a_plain_input_stays_valid():
    # the audited program on an offset-0 contiguous input that covers its storage
    plain = TensorSpec("x1", "s1", (4,), (1,), 0)
    _write_through(plain, 4, [_AT3, Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v5",))]).validate()
    # a prefix of a larger storage: a base of its own size addresses the same elements
    prefix = TensorSpec("x1", "s1", (2, 2), (2, 1), 0)
    _write_through(prefix, 6, [_AT3, Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v5",))]).validate()
    whole_0d = TensorSpec("x1", "s1", (), (), 0)
    at0 = Op("as_strided", ("x1",), {"size": [], "stride": [], "offset": 0}, ("v0",))
    _write_through(whole_0d, 1, [at0, Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v5",))]).validate()
    # a fresh intermediate is its own storage from offset 0
    sin = Op("sin", ("x1",), {}, ("s",))
    at = Op("as_strided", ("s",), {"size": [2], "stride": [1], "offset": 1}, ("v0",))
    x = TensorSpec("x1", "s1", (3,), (1,), 1)
    _write_through(x, 4, [sin, at, Op("add_.Scalar", ("v0",), {"other": 1.0}, ("v5",))]).validate()


@pytest.mark.parametrize(
    ("x", "body", "needle"),
    [
        # out= into the view
        (TensorSpec("x1", "s1", (), (), 3),
         [_AT3, Op("mul.out", ("x1", "x1", "v0"), {}, ("v5",))], "mul.out writes through 'v0'"),
        # a view of the view, written: the view chain is followed
        (TensorSpec("x1", "s1", (3,), (1,), 1),
         [Op("as_strided", ("x1",), {"size": [2], "stride": [1], "offset": 2}, ("v0",)),
          Op("select", ("v0",), {"dim": 0, "index": 1}, ("v1",)),
          Op("fill_", ("v1",), {"value": 2.0}, ("v2",))], "fill_ writes through 'v1'"),
        # an offset-0 input that does not cover its storage (stride 2)
        (TensorSpec("x1", "s1", (2,), (2,), 0),
         [Op("as_strided", ("x1",), {"size": [2], "stride": [2], "offset": 0}, ("v0",)),
          Op("copy_", ("v0", "v0"), {}, ("v2",))], "copy_ writes through 'v0'"),
        # the view read after its base was written: regenerated with the absolute offset
        (TensorSpec("x1", "s1", (), (), 3),
         [_AT3, Op("add_.Scalar", ("x1",), {"other": 1.0}, ("w",)), Op("sin", ("v0",), {}, ("s",))],
         "sin reads 'v0'"),
    ],
    ids=["out=", "view-of-the-view", "strided-input", "read-after-base-written"],
)
def test_layout_readout_follows_as_strided_views_of_unanchored_sources(x, body, needle):
    why = _rejected(_write_through(x, 4, body))
    assert f"{LAYOUT_READOUT}: {needle}" in why


def test_a_stale_as_strided_view_is_not_returned_either():
    p = _write_through(TensorSpec("x1", "s1", (), (), 3), 4,
                       [_AT3, Op("add_.Scalar", ("x1",), {"other": 1.0}, ("w",))])
    p.validate()  # not used after the write: valid
    why = _rejected(p.with_body(p.body, ("v0",)))
    assert why.startswith(f"outputs: {LAYOUT_READOUT}: the program returns 'v0'")


def test_generated_programs_never_return_a_stale_as_strided_view():
    from aliasfuzz.fuzz.sample import generate
    from aliasfuzz.fuzz.validate import infer

    programs = generate(400, 0, families=("view", "inplace", "triton"))
    held = 0
    for p in programs:
        p.validate()  # outputs included: the generator returns no name the rule forbids
        stale = infer(p.with_body(p.body, ())).unreturnable
        held += bool(stale)
        assert not stale & set(p.outputs)
    assert held, "no generated program holds a stale as_strided view: the test tests nothing"


def test_an_as_strided_copy_of_a_written_input_is_valid_within_the_inputs_own_elements():
    # shared case c01 (PyTorch #133512): x = s[::3] of 12, x.mul_(2), as_strided_copy(x, (2,), (3,))
    # reads storage elements 0 and 3, both x's, in bounds on functionalization's dense x
    def program(size, stride, offset=0, x_offset=0, twin=False):
        inputs = [TensorSpec("x", "s", (4,), (3,), x_offset)]
        if twin:  # a second input on the storage: a synthetic base keeps other offsets
            inputs.append(TensorSpec("y", "s", (1,), (1,), 1))
        return Program(
            storages=[StorageSpec("s", 13)], inputs=inputs,
            body=[Op("mul_.Scalar", ("x",), {"other": 2}, ("x1",)),
                  Op("as_strided_copy", ("x1",),
                     {"size": list(size), "stride": list(stride), "offset": offset}, ("c",))],
            outputs=["c"])

    program((2,), (3,)).validate()
    program((1,), (3,), 1, 1).validate()  # x at offset 1: element 1 is x[0]
    for bad in [
        program((2,), (1,)),  # element 1 is not one of x's
        program((4,), (3,)),  # x's own elements, but reach 9 past the 4 of a dense x
        program((2,), (3,), 1, 1),  # reach 1 + 3 on a dense x of 4 elements
        program((2,), (3,), twin=True),  # a second input on the storage (synthetic base)
    ]:
        with pytest.raises(InvalidArgument, match="after its storage was written"):
            bad.validate()


def test_layout_readout_rejects_resize_of_a_dense_intermediate_in_another_memory_order():
    # fresh user 47's B2 (f2cdbcfd33): put keeps x0's strides (3, 9, 1) in eager, Inductor's
    # result had (9, 3, 1), and resize_ read the memory order as values
    def program(stride):
        return Program(
            (StorageSpec("s0", 27), StorageSpec("s1", 2)),
            (TensorSpec("x0", "s0", (3, 3, 3), stride), TensorSpec("x1", "s1", (2,), (1,))),
            (Op("put", ("x0", "x1"), {"accumulate": False, "index": [0, 1]}, ("v5",)),
             Op("resize_", ("v5",), {"size": [27, 1]}, ("v7",))),
            ("v7",))

    why = _rejected(program((3, 9, 1)))
    assert f"{LAYOUT_READOUT}: resize_ of 'v5', an intermediate with strides (3, 9, 1) " \
           "(dense, not row-major)" in why, why
    program((9, 3, 1)).validate()  # a row-major result: its memory order is its logical one

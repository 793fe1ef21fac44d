"""Inductor's Triton mutation analysis compared with the true launch footprints (CPU layer).

For every launch row the claim of ``get_mutated_tensors`` is compared with the row's
``writes`` on the launch's layouts: (a) the library's kernels agree; (b) a store masked off
by ``n=0`` is an over-claim, and so is one gated by a runtime flag that is off from torch
2.13 (2.11 specialises the analysed TTIR on scalar values); (c) kernels that defeat the TTIR
analysis fall back to "everything mutated"; (d) with mutant m6 (drops the first written
argument) the written argument is an under-claim. Then the judge's ``kernel-analysis`` check on programs
with launches, through ``inductor-reinplace`` and ``aot_eager``.
"""

from __future__ import annotations

import importlib.util
import sys
import textwrap
from pathlib import Path

import pytest
import torch

pytest.importorskip("triton")

from aliasfuzz import plugins  # noqa: E402
from aliasfuzz.fuzz import triton_compat  # noqa: E402
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec  # noqa: E402
from aliasfuzz.fuzz.ops import REGISTRY, OpKind, lookup  # noqa: E402
from aliasfuzz.fuzz.validate import infer  # noqa: E402
from aliasfuzz.oracle import kernel_analysis as ka  # noqa: E402
from aliasfuzz.oracle.judge import judge  # noqa: E402
from aliasfuzz.oracle.verdict import Verdict  # noqa: E402
from tests.common.torch_versions import torch_before  # noqa: E402

M6 = Path(__file__).resolve().parents[2] / "bench" / "mutants" / "m6_triton_readonly.py"
cpu_layer = pytest.mark.skipif(torch.cuda.is_available(), reason="CPU Triton layer only")


@pytest.fixture(autouse=True)
def _layer():
    # the eager reference launches natively; on CPU it needs the interpreter routing
    triton_compat.enable()
    yield
    plugins.unload_all()


@pytest.fixture
def m6():
    plugins.load_plugins([M6])
    yield
    plugins.unload_all()


def _prog(inputs, body, outputs=()):
    """Fresh 1-d float32 inputs ``(name, numel)`` filled 1, 2, 3, ..."""
    storages = tuple(StorageSpec(f"s_{n}", k, init_args={"start": 1}) for n, k in inputs)
    specs = tuple(TensorSpec(n, f"s_{n}", (k,), (1,)) for n, k in inputs)
    return Program(storages, specs, tuple(body), tuple(outputs))


def _statuses(program: Program) -> list[dict[str, str]]:
    return [{a.param: a.status for a in r.args} for r in ka.analyse_program(program)]


FLAT_ADD = _prog(
    [("a", 8), ("b", 8)],
    [
        Op("empty_like", ("a",), {}, ("out",)),
        Op("tk.flat_add", ("a", "b", "out"), {"grid": ["cdiv(numel(0), 4)"], "BLOCK": 4, "n": "numel(0)"}),
    ],
    ["out"],
)

#: one launch of each hand-written row of the library: (program, parameter -> written?)
LIBRARY = {
    "tk.flat_add": (FLAT_ADD, {"a_ptr": False, "b_ptr": False, "out_ptr": True}),
    "tk.scale_": (
        _prog([("x", 8)], [Op("tk.scale_", ("x",), {"grid": [2], "BLOCK": 4, "n": 6, "alpha": 0.5})]),
        {"x_ptr": True},
    ),
    "tk.scale_then_shift": (  # the same tensor twice (case b15)
        _prog([("x", 8)], [Op("tk.scale_then_shift", ("x", "x"), {"grid": [1], "BLOCK": 8})]),
        {"first_ptr": True, "second_ptr": True},
    ),
    "tk.double_kept_rows": (  # a may-write footprint (case b18)
        Program(
            (StorageSpec("s", 12), StorageSpec("k", 3, dtype="int32", init="values", init_args={"data": [0, 1, 1]})),
            (TensorSpec("x", "s", (3, 4), (4, 1)), TensorSpec("keep", "k", (3,), (1,))),
            (
                Op(
                    "tk.double_kept_rows",
                    ("x", "keep"),
                    {"grid": [3], "BLOCK": 4, "ncols": "size(0, 1)", "row_stride": "stride(0, 0)"},
                ),
            ),
        ),
        {"x_ptr": True, "keep_ptr": False},
    ),
}


# -- (a) agreement --------------------------------------------------------------------
@pytest.mark.parametrize("row", sorted(LIBRARY))
def test_library_kernels_agree_with_the_analysis(row):
    program, written = LIBRARY[row]
    (report,) = ka.analyse_program(program)
    assert report.op == row and not report.fell_back and not report.error
    assert {a.param: a.written_bytes > 0 for a in report.args} == written
    assert {a.param: a.claimed for a in report.args} == written
    assert {a.status for a in report.args} == {ka.AGREE}


def test_generated_launches_are_never_under_claimed_nor_fall_back():
    # rows of the generated kernel library go through the same OpDef interface
    from aliasfuzz.fuzz.sample import generate

    if not any(d.gen is not None and d.kind is OpKind.TRITON for d in REGISTRY.values()):
        pytest.skip("no generatable Triton rows yet")
    reports = [r for p in generate(40, 0, families=("triton",)) for r in ka.analyse_program(p)]
    assert reports
    assert [r for r in reports if r.error or r.fell_back] == []
    assert [a for r in reports for a in r.args if a.status == ka.UNDER_CLAIM] == []


def test_byte_counts_follow_the_launch_extent():
    p = _prog([("x", 8)], [Op("tk.scale_", ("x",), {"grid": [2], "BLOCK": 4, "n": 3, "alpha": 2.0})])
    ((arg,),) = [r.args for r in ka.analyse_program(p)]
    assert (arg.value, arg.storage, arg.written_bytes) == ("x", "s_x", 12)


# -- (b) over-claim ---------------------------------------------------------------------
def _copy_if(flag: int, n: int = 8) -> Program:
    return _prog([("x", 8), ("y", 8)], [Op("kp.copy_if", ("x", "y"), {"grid": [1], "BLOCK": 8, "n": n, "flag": flag})])


#: torch 2.11's ``generate_ttir`` hands every non-tensor launch argument to Triton as a
#: constant (``constants = {name: arg ... if not is_tensor_like_arg(arg)}``), so the TTIR
#: it analyses is specialised on the scalars' values: ``if flag != 0`` folds away with
#: ``flag=0`` and no store is left to claim. torch 2.13 inlines only ``tl.constexpr``
#: parameters and None (``_is_constexpr_or_none``): the gated store stays, a static
#: may-write. A store masked off by ``n=0`` survives constant folding on both.
SCALARS_SPECIALISED = torch_before("2.13")


def test_a_store_gated_off_by_a_runtime_flag_is_an_over_claim():
    gated_off = ka.AGREE if SCALARS_SPECIALISED else ka.OVER_CLAIM
    assert _statuses(_copy_if(0)) == [{"x_ptr": ka.AGREE, "y_ptr": gated_off}]
    assert _statuses(_copy_if(1)) == [{"x_ptr": ka.AGREE, "y_ptr": ka.AGREE}]
    # a store the launch masks off entirely is an over-claim on every release
    assert _statuses(_copy_if(1, n=0)) == [{"x_ptr": ka.AGREE, "y_ptr": ka.OVER_CLAIM}]
    for program in (_copy_if(0), _copy_if(1, n=0)):
        (off,) = ka.analyse_program(program)
        assert not off.fell_back and [a.written_bytes for a in off.args] == [0, 0]


# -- (c) fallback -----------------------------------------------------------------------
def test_an_omitted_default_argument_makes_the_analysis_fall_back():
    p = _prog([("x", 8), ("y", 8)], [Op("kp.scale_default", ("y", "x"), {"grid": [1], "BLOCK": 8, "n": 8})])
    (r,) = ka.analyse_program(p)
    assert r.fell_back and "Incorrect number of arguments" in r.reason
    assert {a.param: (a.claimed, a.status) for a in r.args} == {
        "out_ptr": (True, ka.AGREE),
        "x_ptr": (True, ka.FALLBACK),
    }


KERNELS = """
import triton
import triton.language as tl


@triton.jit
def _larger(a, b):
    return tl.where(a > b, a, b)


@triton.jit
def max_into(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    a = tl.load(x_ptr + offs)
    tl.store(y_ptr + offs, tl.map_elementwise(_larger, a, tl.load(y_ptr + offs)))


@triton.jit
def copy(x_ptr, y_ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(y_ptr + offs, tl.load(x_ptr + offs))
"""


@pytest.fixture(scope="module")
def kernels(tmp_path_factory):
    path = tmp_path_factory.mktemp("kernels") / "aliasfuzz_test_analysis_kernels.py"
    path.write_text(textwrap.dedent(KERNELS))
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _fakes(n):
    from torch._subclasses.fake_tensor import FakeTensorMode

    with FakeTensorMode():
        return [torch.empty(8) for _ in range(n)]


def test_inductor_claim_of_a_hand_made_kernel(kernels):
    x, y = _fakes(2)
    claim = ka.inductor_claim(kernels.copy, {"x_ptr": x, "y_ptr": y, "BLOCK": 8})
    assert claim == ka.InductorClaim(("y_ptr",), False, "")


def test_map_elementwise_defeats_the_ttir_analysis(kernels):
    x, y = _fakes(2)
    claim = ka.inductor_claim(kernels.max_into, {"x_ptr": x, "y_ptr": y, "BLOCK": 8})
    assert claim.fell_back and "Unknown blocked function: tt.map_elementwise" in claim.reason
    assert set(claim.written) == {"x_ptr", "y_ptr"}


# -- (d) under-claim under mutant m6 ----------------------------------------------------
@pytest.mark.parametrize("row", ["tk.flat_add", "tk.scale_then_shift"])
def test_mutant_m6_makes_the_first_written_argument_an_under_claim(row, m6):
    program, written = LIBRARY[row]
    first = next(p for p, w in written.items() if w)
    got = _statuses(program)[0]
    assert got[first] == ka.UNDER_CLAIM
    assert {p: s for p, s in got.items() if p != first} == {p: ka.AGREE for p in got if p != first}


def test_the_cache_follows_the_installed_analysis():
    program = LIBRARY["tk.scale_"][0]
    assert _statuses(program) == [{"x_ptr": ka.AGREE}]
    plugins.load_plugins([M6])
    assert _statuses(program) == [{"x_ptr": ka.UNDER_CLAIM}]
    plugins.unload_all()
    assert _statuses(program) == [{"x_ptr": ka.AGREE}]


def test_analyse_launch_refuses_a_row_that_is_not_a_launch():
    step = infer(_prog([("x", 4)], [Op("sin", ("x",), {}, ("y",))], ["y"])).steps[0]
    with pytest.raises(ValueError, match="not a Triton launch row"):
        ka.analyse_launch(lookup("sin"), step.args, step.op.params)


# -- the judge's kernel-analysis check --------------------------------------------------
def _check(j):
    (c,) = [c for c in j.checks if c.name == "kernel-analysis"]
    return c


@cpu_layer
@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor-reinplace"])
def test_judge_reports_agreement_as_a_passed_check(pipeline):
    j = judge(FLAT_ADD, pipeline)
    assert j.verdict is Verdict.OK, j.diff
    c = _check(j)
    assert c.passed and c.message == "1 launch(es): 3 agree, 0 under-claim, 0 over-claim, 0 fallback"
    assert [r.op for r in j.kernel_analysis] == ["tk.flat_add"]


@cpu_layer
@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor-reinplace"])
def test_over_claims_are_counted_notes_not_findings(pipeline):
    # masked off (n=0) rather than gated off (flag=0): an over-claim on every release
    # (SCALARS_SPECIALISED)
    j = judge(_copy_if(1, n=0), pipeline)
    assert j.verdict is Verdict.OK, j.diff
    assert _check(j).passed
    notes = [f for f in j.filtered if f.startswith("kernel-analysis over-claim")]
    assert len(notes) == 1 and "fzp_copy_if(y_ptr=y)" in notes[0]


@cpu_layer
def test_a_fallback_clone_the_pass_keeps_is_a_confirmed_missed_reinplace():
    # x twice: the fallback claims the read-only x_ptr too; the pass reinplaces out_ptr and
    # keeps x_ptr's clone (one argument per storage), which this launch never needs
    p = _prog([("x", 8)], [Op("kp.scale_default", ("x", "x"), {"grid": [1], "BLOCK": 8, "n": 8})])
    j = judge(p, "inductor-reinplace")
    assert (j.verdict, j.check) == (Verdict.MISSED_REINPLACE, "kernel-analysis"), j.diff
    c = _check(j)
    assert c.verdict is Verdict.MISSED_REINPLACE and "x_ptr=x" in c.message and "forced in place" in c.message


@cpu_layer
def test_a_fallback_on_an_aliased_argument_explains_the_miscompile():
    # functionalization writes back the stale clone of x_ptr after the kernel's out_ptr
    p = _prog([("x", 8)], [Op("kp.scale_default", ("x", "x"), {"grid": [1], "BLOCK": 8, "n": 8})])
    j = judge(p, "aot_eager")
    assert (j.verdict, j.check) == (Verdict.MISCOMPILE, "inputs"), j.diff
    assert _check(j).verdict is Verdict.MISCOMPILE and "stale clone" in j.explanation


@cpu_layer
@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor-reinplace"])
def test_under_claims_under_m6_are_miscompiles(pipeline, m6):
    j = judge(FLAT_ADD, pipeline)
    assert j.verdict is Verdict.MISCOMPILE, j.diff
    c = _check(j)
    assert c.verdict is Verdict.MISCOMPILE and "fz_flat_add(out_ptr=out) writes 32 B" in c.message


@cpu_layer
def test_an_under_claim_execution_cannot_confirm_stays_unknown(m6):
    # scaling by 1.0 writes the values already there: dropping the write changes nothing
    p = _prog([("x", 8)], [Op("tk.scale_", ("x",), {"grid": [2], "BLOCK": 4, "n": 8, "alpha": 1.0})])
    j = judge(p, "inductor-reinplace")
    assert (j.verdict, j.check) == (Verdict.UNKNOWN, "kernel-analysis"), j.diff
    assert not j.verdict.is_finding and "not confirmed" in _check(j).message


@cpu_layer
def test_pipelines_that_do_not_functionalize_kernels_skip_the_check():
    from types import SimpleNamespace

    j = SimpleNamespace(pipeline="torchscript", checks=[], filtered=[])
    ka.judge_launches(j, FLAT_ADD, None, None, [], None)
    assert j.checks == [] and j.filtered == []


@pytest.mark.gpu
def test_analysis_on_the_real_driver():
    # same comparison with CUDA's own Triton driver (no fake target)
    assert not triton_compat.enabled()
    for row in ("tk.flat_add", "tk.scale_then_shift"):
        program, written = LIBRARY[row]
        (r,) = ka.analyse_program(program)
        assert {a.param: a.claimed for a in r.args} == written and not r.fell_back
    (on,) = ka.analyse_program(_copy_if(1))
    assert {a.param: a.status for a in on.args} == {"x_ptr": ka.AGREE, "y_ptr": ka.AGREE}
    (off,) = ka.analyse_program(_copy_if(0))
    status = {a.param: a.status for a in off.args}
    # torch 2.11 with the real driver on the H200 claimed no write of y for flag 0 ("agree",
    # bench/runs/gpu-2026-11-30.md): its generate_ttir specialises the TTIR on scalar
    # values whatever the driver (SCALARS_SPECIALISED)
    gated_off = ka.AGREE if SCALARS_SPECIALISED else ka.OVER_CLAIM
    assert status == {"x_ptr": ka.AGREE, "y_ptr": gated_off}
    assert not off.fell_back and [a.written_bytes for a in off.args] == [0, 0]

"""A missed reinplace is reported only when the kept copy costs bytes in Inductor's own
accounting of the generated code (issue 12, third audit rows 12 and 23; issue 14):
:func:`aliasfuzz.passes.cost.inductor_cost`, :class:`aliasfuzz.oracle.confirm.Excess` and
the judge's cost gate."""

from __future__ import annotations

import torch
from hypothesis import given, settings
from hypothesis import strategies as st

from aliasfuzz.oracle.confirm import Excess
from aliasfuzz.oracle.judge import judge
from aliasfuzz.oracle.verdict import Verdict
from aliasfuzz.passes.cost import inductor_cost


def _compiled_bytes(fn, *args) -> int:
    torch._dynamo.reset()
    with inductor_cost() as graphs, torch._inductor.config.patch(force_disable_caches=True):
        torch.compile(fn, backend="inductor")(*args)
    assert graphs, "no graph was lowered"
    return sum(g.bytes for g in graphs)


def test_inductor_cost_counts_bytes_that_grow_with_the_tensor():
    def f(x):
        return x.sin() + 1

    small, large = _compiled_bytes(f, torch.randn(100)), _compiled_bytes(f, torch.randn(1000))
    assert small == 2 * 100 * 4  # read x, write the result: float32
    assert large == 10 * small


def test_excess_needs_half_a_pass_over_the_copied_tensor():
    assert Excess(default=8000, forced=4024, copied=4000, kernels=(1, 2), temporaries=(4000, 0)).worth_reporting()
    # with no temporary saved the forced code must move at most half the bytes: 1.99x is
    # not leaner in kind (seventeenth audit, 8c9f0d424d: same buffers, same loops)
    assert not Excess(default=8000, forced=4024, copied=4000, kernels=(1, 2)).worth_reporting()
    assert Excess(default=8000, forced=4000, copied=4000, kernels=(1, 1)).worth_reporting()
    assert not Excess(default=172, forced=144, copied=16, kernels=(5, 6)).worth_reporting()
    assert not Excess(default=8000, forced=8016, copied=4000, kernels=(1, 2)).worth_reporting()
    assert not Excess(default=24, forced=20, copied=4000, kernels=(1, 1)).worth_reporting()
    assert not Excess(default=48, forced=0, copied=0, kernels=(1, 0)).worth_reporting()
    assert "2.0x" in Excess(8000, 4000, 4000, (2, 1)).message()
    # scheduler nodes, not kernels (CPU codegen fuses them); the temporary the copy keeps
    said = Excess(8000, 4000, 4000, (3, 2), (4000, 0)).message()
    assert "(3 scheduler nodes)" in said and "kernels" not in said
    assert said.endswith("; it allocates 4000 bytes of temporaries, 0 with the copy dropped")
    assert "allocates" not in Excess(8000, 4000, 4000, (3, 2), (0, 0)).message()
    from aliasfuzz.campaign.repro import _COST

    assert _COST.search("x " + said + " (y)").group(0) == said


def _seeded(*shape):
    def make():
        return (torch.randn(*shape, generator=torch.Generator().manual_seed(0)),)

    return make


def test_a_copy_kept_for_an_empty_slice_is_not_a_finding():
    def f(x0):  # third audit, row 12: x0[1:1:2] is empty
        x0[1:1:2] += -2.5

    j = judge(f, "inductor-reinplace", inputs=_seeded(2, 3, 3))
    assert j.verdict is Verdict.OK, j.explanation
    assert any(r.startswith("empty-update:") for r in j.filtered), j.filtered


def test_row_update_of_a_large_input_is_missed_with_its_bytes():
    def f(x):  # issue 14's row update: x[i] *= c on a large input
        x[3] *= 2.0

    for pipeline in ("inductor", "inductor-reinplace"):
        j = judge(f, pipeline, inputs=_seeded(64, 256))
        assert j.verdict is Verdict.MISSED_REINPLACE, (pipeline, j.explanation, j.filtered)
        assert "Inductor's generated code moves" in j.explanation
        assert "for a 65536-byte tensor" in j.explanation
        if pipeline == "inductor":  # the full pipeline's run has a cost: it names a witness
            assert "witness augmented-setitem: `x[3] *= 2.0` spelled `x[3].mul_(2.0)`" in j.explanation


def test_slice_augmented_assignment_keeps_the_audited_finding():
    def f(x):  # shared/audit missed-reinplace-inductor-7a0dab6dd7
        x[0:2] += 0.5

    j = judge(f, "inductor", inputs=lambda: (torch.arange(4096.0),))
    assert j.verdict is Verdict.MISSED_REINPLACE, (j.explanation, j.filtered)
    assert "excess" in j.explanation


@settings(max_examples=4, deadline=None, derandomize=True)
@given(rows=st.integers(1, 40), cols=st.integers(1, 40), op=st.sampled_from(["add_", "mul_", "sin_"]))
def test_already_optimal_programs_are_never_missed_reinplace(rows, cols, op):
    def inplace(x):
        getattr(x, op)(*([] if op == "sin_" else [2.0]))

    def functional(x):
        return x * 2.0

    make = _seeded(rows, cols)
    for f in (inplace, functional):
        j = judge(f, "inductor", inputs=make)
        assert j.verdict is not Verdict.MISSED_REINPLACE, (f.__name__, j.explanation)
        assert j.verdict is Verdict.OK, (f.__name__, j.verdict, j.explanation)
        assert j.cost is not None and j.cost["ratio"] == 1.0, (f.__name__, j.cost)
        assert j.witness is None


def test_an_unmeasurable_kept_copy_is_unknown_not_a_finding(monkeypatch):
    # third audit row 29: a Triton argument's clone on the fast path; on a CPU host full
    # Inductor cannot lower the launch, so the copy's cost is not shown
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program
    from aliasfuzz.passes import pipelines

    folder = Path(__file__).resolve().parents[1] / "data" / "not_findings" / "missed-reinplace-reinplace-e3deb46f7b"
    program = Program.loads((folder / "program.json").read_text())
    run_function, ran = pipelines.run_function, []

    def spied(name, *a, **k):
        ran.append(name)
        return run_function(name, *a, **k)

    monkeypatch.setattr(pipelines, "run_function", spied)
    j = judge(program, "inductor-reinplace")
    assert j.verdict is Verdict.UNKNOWN, (j.verdict, j.explanation)
    assert "Inductor's full compile lowered or forced nothing to measure" in j.explanation
    # the claim was confirmed on the fast path, and the full compile that cannot lower a
    # Triton launch on this host was not tried (it failed after 1.3-2.3 s per claim)
    assert "inductor-reinplace" in ran and "inductor" not in ran, ran


def test_a_row_scatter_whose_update_is_an_empty_slice_is_not_a_finding():
    def f(x0):  # fourth audit, 8c9f0d424d: select_scatter of a row holding an empty slice update
        x0[1, 0:0:3, :] += 1.0

    j = judge(f, "inductor-reinplace", inputs=_seeded(2, 3, 4))
    assert j.verdict is Verdict.OK, j.explanation
    assert any(r.startswith("empty-update:") for r in j.filtered), j.filtered


def test_a_two_element_slice_update_has_its_view_spelling_as_witness():
    def f(x):  # issue 14: x[0:2] += 0.5 on a large input
        x[0:2] += 0.5

    j = judge(f, "inductor", inputs=lambda: (torch.arange(4096.0),))
    assert j.verdict is Verdict.MISSED_REINPLACE, (j.explanation, j.filtered)
    assert j.cost["needed"] == 16 and j.cost["compiled"] == 2 * 4096 * 4, j.cost
    w = j.witness
    assert (w.rule, w.original, w.spelled) == ("augmented-setitem", "x[0:2] += 0.5", "x[0:2].add_(0.5)")
    assert w.bytes == (2 * 4096 * 4, 16) and w.scaled_bytes == (2 * 8192 * 4, 16)
    assert "compiled/needed 2048.0x" in j.explanation and "x[0:2].add_(0.5)" in j.explanation


def test_excess_grows_with_the_moved_bytes_or_the_kept_temporary():
    small = Excess(default=1104, forced=976, copied=256, kernels=(3, 3), temporaries=(256, 0))
    # case b20: the forced code is charged a fixed 128 bytes, the kept temporary doubles
    assert small.grows_to(Excess(2128, 2000, 512, (3, 3), (512, 0)), 1.8)
    assert not small.grows_to(Excess(2128, 2000, 512, (3, 3), (256, 0)), 1.8)
    # no temporary (a wider pass over memory, x[0:2] += 0.5): the bytes moved must grow
    wide = Excess(default=32768, forced=16, copied=32768, kernels=(1, 1))
    assert wide.grows_to(Excess(65536, 16, 65536, (1, 1)), 1.8)
    assert not wide.grows_to(Excess(32784, 16, 32768, (1, 1)), 1.8)
    # a fixed-size temporary is a fixed cost, whatever the bytes around it do (f4cc987aec:
    # 4 bytes kept, moved bytes 8 -> 16)
    fixed = Excess(default=76, forced=68, copied=4, kernels=(5, 5), temporaries=(4, 0))
    assert not fixed.grows_to(Excess(152, 136, 4, (5, 5), (4, 0)), 1.8)


def test_a_fixed_size_temporary_whose_moved_bytes_grow_is_not_a_finding():
    # 2,000-program campaign of 2026-12-01, f4cc987aec: an index_put self of one float
    # (4 bytes) kept; the bytes moved double with the inputs, the temporary does not
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program

    data = Path(__file__).resolve().parents[1] / "data" / "not_findings" / "missed-reinplace-reinplace-f4cc987aec"
    j = judge(Program.loads((data / "program.json").read_text()), "inductor-reinplace")
    assert j.verdict is not Verdict.MISSED_REINPLACE, j.explanation
    assert any(f.startswith("excess-does-not-scale (") and "4 -> 4 bytes" in f
               for f in j.filtered), (j.verdict, j.explanation, j.filtered)


def test_a_kept_copy_whose_excess_does_not_grow_is_not_a_finding():
    # sixth audit false positive 0795905a61: 16 bytes for an 8-byte custom-op result that
    # doubling the inputs does not grow
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program

    data = Path(__file__).resolve().parents[1] / "data" / "not_findings" / "missed-reinplace-reinplace-0795905a61"
    j = judge(Program.loads((data / "program.json").read_text()), "inductor-reinplace")
    assert j.verdict is Verdict.OK, j.explanation
    assert any(f.startswith("excess-does-not-scale (") and "8 -> 8 bytes" in f for f in j.filtered), j.filtered


def test_a_read_through_a_mutation_buffer_is_charged_at_its_base_size():
    # tenth audit, wave B false positive (8c9f0d424d's sighting x[2] = 0.5; x.add_(1.0)):
    # forced in place, the add read x through the select_scatter's mutation buffer, capped
    # at its one-element update (24 bytes) below the fused default kernel (32): no copy
    # is kept in the generated code, and the in-place spelling compiles to the same kernel
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program

    data = (Path(__file__).resolve().parents[1] / "data" / "not_findings"
            / "missed-reinplace-reinplace-8c9f0d424d-tenth")
    j = judge(Program.loads((data / "program.json").read_text()), "inductor-reinplace")
    assert j.verdict is not Verdict.MISSED_REINPLACE, j.explanation

    def inplace(x):
        x.select(0, 2).fill_(0.5)
        x.add_(1.0)

    def program(x):
        x[2] = 0.5
        x.add_(1.0)

    x = torch.arange(1025.0)[:1024]
    assert _compiled_bytes(program, x.clone()) == _compiled_bytes(inplace, x.clone()) == 2 * 1024 * 4


def test_a_clone_written_into_an_input_only_as_scratch_is_not_a_finding():
    # sixteenth audit false positive 0795905a61 (its program reconstructed from the notes):
    # bump_pair(x1, v3) with v3 = x0.clone() and x1 aliasing x0; post-grad, q's base is
    # as_strided(arg0_1) and the copy_ epilogue writes base 0's result over all of arg0_1,
    # so writing q in place is value-safe only as dead scratch in the caller's storage
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program

    data = (Path(__file__).resolve().parents[1] / "data" / "not_findings"
            / "missed-reinplace-reinplace-0795905a61-sixteenth")
    j = judge(Program.loads((data / "program.json").read_text()), "inductor-reinplace")
    assert j.verdict is Verdict.OK, (j.verdict, j.explanation)
    assert j.filtered == ["scratch-in-input: auto_functionalized_v2 (_all_bases[1])"], j.filtered
    truth = next(c.truth for c in j.claims if c.decision.arg == "_all_bases[1]")
    assert truth.status == "safe" and truth.scratch and "getitem_1" in truth.reason, truth


def test_a_copy_back_computed_from_the_result_is_not_scratch():
    # x[2] += 2.0: the epilogue copies the setitem's second select_scatter, computed from
    # the first one's result, so the first one's in-place write is what the caller sees
    def f(x):
        x[2] += 2.0

    j = judge(f, "inductor-reinplace", inputs=lambda: (torch.arange(4096.0),))
    assert not any(r.startswith("scratch-in-input") for r in j.filtered), j.filtered
    assert j.verdict is Verdict.MISSED_REINPLACE and j.check == "candidates", (j.verdict, j.explanation)


def _not_finding(name: str):
    from pathlib import Path

    from aliasfuzz.fuzz.ir import Program

    data = Path(__file__).resolve().parents[1] / "data" / "not_findings" / name
    return Program.loads((data / "program.json").read_text())


def test_a_kept_scatter_fused_into_its_consumer_is_not_a_finding():
    # seventeenth audit false positive 8c9f0d424d: forced in place, the code allocates the
    # same buffers and runs the same loops; 172 against 144 bytes is the accounting's
    j = judge(_not_finding("missed-reinplace-reinplace-8c9f0d424d-seventeenth"), "inductor-reinplace")
    assert j.verdict is not Verdict.MISSED_REINPLACE, j.explanation
    assert any(f.startswith("no-measured-excess (") for f in j.filtered), (j.verdict, j.filtered)


def test_a_witness_with_the_same_kernels_is_not_a_finding():
    # seventeenth audit false positive aebacc9733: the graph-split spelling compiles to the
    # same kernels and the same copy-back; 56 against 48 bytes was an empty view charged as
    # a whole read, with the same temporaries
    j = judge(_not_finding("missed-reinplace-unblamed-inductor-aebacc9733-seventeenth"), "inductor")
    assert j.witness is None and j.verdict is not Verdict.MISSED_REINPLACE, j.explanation


def test_a_fallback_output_costs_the_same_whatever_orders_after_it():
    # audit 42's invalid 2e5d53d047: `x.add_(1); x.index_reduce_(...)` against its
    # graph-split spelling. Inductor's own accounting charged the index_reduce fallback's
    # output 0 bytes when a later kernel orders itself after the fallback's tuple (WeakDep)
    # and 1024 otherwise, so the same code looked 1024 bytes leaner when split
    def f(x, v):
        x.add_(1.0)
        x.index_reduce_(0, torch.tensor([13, 4]), v, "amin", include_self=True)

    def split(x, v):
        x.add_(1.0)
        torch._dynamo.graph_break()
        x.index_reduce_(0, torch.tensor([13, 4]), v, "amin", include_self=True)

    args = (torch.randn(16, 16), torch.randn(2, 16))
    assert _compiled_bytes(f, *(a.clone() for a in args)) == _compiled_bytes(split, *(a.clone() for a in args))


def test_a_split_that_moves_the_same_bytes_is_no_witness():
    j = judge(_not_finding("missed-reinplace-unblamed-inductor-2e5d53d047-fortysecond"), "inductor")
    assert j.witness is None and j.verdict is not Verdict.MISSED_REINPLACE, j.explanation

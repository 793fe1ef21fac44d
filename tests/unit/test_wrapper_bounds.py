"""oracle.wrapper_bounds: views past their base's storage made by Inductor's generated
wrapper, checked as it makes them. The program of corpus crash-lowering-5fcbc5cdc0 (the
wrapper makes reinterpret_tensor(buf0, (2, 1), (3, 1), 11) of a 10-element buffer) is run
in a child interpreter by tests/unit/test_heap.py; here the check itself, and the hook
around a real compile that stays in bounds."""

from __future__ import annotations

import torch

from aliasfuzz.oracle.wrapper_bounds import checked_views, out_of_bounds, read_found
from aliasfuzz.passes import hygiene  # noqa: F401 - its one-time setup runs before the snapshot


def test_the_corpus_entrys_view_past_its_ten_element_buffer_is_out_of_bounds():
    buf0 = torch.empty_strided((4, 1), (3, 1))  # 10 elements, as Inductor allocated it
    o = out_of_bounds(buf0, (2, 1), (3, 1), 11)
    assert o is not None and (o.numel, o.lo, o.hi) == (10, 11, 14)
    assert "(2, 1), (3, 1), 11)" in o.message() and "11 to 14" in o.message()
    # the offsets Inductor should have used, and the last element exactly
    assert out_of_bounds(buf0, (2, 1), (3, 1), 0) is None
    assert out_of_bounds(buf0, (2, 1), (3, 1), 6) is None
    assert out_of_bounds(buf0, (2, 1), (3, 1), 7).hi == 10


def test_the_storage_not_the_tensor_bounds_a_view_and_empty_views_reach_nothing():
    s = torch.zeros(12)
    x = s[4:6]  # a view of 2 elements at storage offset 4 on a storage of 12
    # the offset is relative to the base's storage offset: 4 + 1 + 3 * 2 = 11 is the last element
    assert out_of_bounds(x, (4,), (2,), 1) is None
    o = out_of_bounds(x, (4,), (2,), 2)
    assert o.hi == 12 and o.base_offset == 4 and "(base at storage offset 4)" in o.message()
    assert out_of_bounds(x, (0, 3), (1, 1), 99) is None  # empty
    assert out_of_bounds(x, (2,), (1,), -4) is None  # back to element 0: in bounds
    assert out_of_bounds(x, (2,), (1,), -5).lo == -1  # before the storage
    half = torch.zeros(3, dtype=torch.float16)  # elements of the base's dtype, not bytes
    assert out_of_bounds(half, (3,), (1,), 0) is None and out_of_bounds(half, (2,), (1,), 2)


def test_the_offset_is_the_one_reinterpret_tensor_adds_to_its_base_s():
    # audit 45, b2717ee500: reinterpret_tensor(x, (), (), -2) of an input at storage offset 2,
    # read as absolute, was filed as a write out of bounds; the view is storage element 0
    from torch._C._dynamo.guards import _reinterpret_tensor

    s = torch.arange(5.0)
    x = torch.as_strided(s, (2,), (2,), 2)
    assert _reinterpret_tensor(x, (), (), -2).storage_offset() == 0
    assert out_of_bounds(x, (), (), -2) is None
    assert _reinterpret_tensor(x, (2,), (1,), 1).storage_offset() == 3
    assert out_of_bounds(x, (2,), (1,), 1) is None and out_of_bounds(x, (2,), (1,), 2).hi == 5


def test_a_compiled_wrapper_gets_the_checking_view_and_in_bounds_runs_record_nothing(tmp_path):
    from torch._inductor import codecache

    real = codecache.PyCodeCache.__dict__["load_by_key_path"]
    made = []

    def f(x):
        a, b = x.split(2)  # views of the input's buffer: reinterpret_tensor in the wrapper
        return torch.ops.aten.mm(a, b.t()) + 1

    x = torch.arange(12.0).reshape(4, 3)
    # a cache hit would skip loading a wrapper: every cache off, as the pipelines run
    with torch.compiler.config.patch(force_disable_caches=True), \
            checked_views(tmp_path / "views") as found:
        checking = codecache.PyCodeCache.__dict__["load_by_key_path"]

        def spy(cls, *a, **k):  # which wrapper modules got the checking view
            mod = checking.__func__(cls, *a, **k)
            made.append(getattr(getattr(mod, "reinterpret_tensor", None), "checked", False))
            return mod

        codecache.PyCodeCache.load_by_key_path = classmethod(spy)
        try:
            out = torch.compile(f, backend="inductor")(x)
        finally:
            codecache.PyCodeCache.load_by_key_path = checking
    assert torch.equal(out, f(x))
    assert True in made and found == [] and read_found(tmp_path / "views") == []
    assert codecache.PyCodeCache.__dict__["load_by_key_path"] is real  # restored


def test_read_found_reads_what_was_written_and_skips_a_line_cut_short(tmp_path):
    path = tmp_path / "views"
    buf = torch.empty(10)
    o = out_of_bounds(buf, (2, 1), (3, 1), 11)
    import json
    from dataclasses import asdict

    path.write_text(json.dumps(asdict(o)) + "\n" + '{"sizes": [2')  # killed mid-write
    assert read_found(path) == [o]
    assert read_found(tmp_path / "absent") == []


def test_a_worker_run_of_the_corpus_entry_stops_at_the_view_and_is_an_out_of_bounds_crash():
    # corpus crash-lowering-5fcbc5cdc0 under inductor: the wrapper's second view of buf0 is
    # past its 10 elements. The checked view raises before the custom op writes through it
    # (so this process's heap is safe), and the outcome names the view, not the values the
    # write would have spoiled (a campaign wrote it as miscompile-unblamed-inductor, inputs)
    import json
    from pathlib import Path

    from aliasfuzz.campaign._judge import evaluate
    from aliasfuzz.fuzz.ir import Program

    entry = Path(__file__).resolve().parents[2] / "corpus" / "crash-lowering-5fcbc5cdc0"
    p = Program.from_json(json.loads((entry / "program.json").read_text()))
    out = evaluate(p, "inductor", "cpu", None)
    assert (out["verdict"], out["check"]) == ("crash", "out-of-bounds"), out
    assert out["out_of_bounds"] == [
        "Inductor's wrapper made reinterpret_tensor(buf, (2, 1), (3, 1), 11) of a storage of "
        "10 elements, reaching elements 11 to 14: out of bounds"]
    assert out["explanation"].startswith("inductor writes out of bounds: ")
    # the pass-off control and aot_eager make no such view: their outcomes are the judge's
    assert evaluate(p, "aot_eager", "cpu", None).get("out_of_bounds") is None


def _shared_outcomes(program: dict) -> dict:
    """A child interpreter's step: the worker's judgement of ``program`` under aot_eager and
    inductor from one Dynamo capture (``--share-trace``), (verdict, check, views) each."""
    from aliasfuzz.campaign._judge import evaluate_group
    from aliasfuzz.fuzz.ir import Program

    out = evaluate_group(Program.from_json(program), ["aot_eager", "inductor"], "cpu")
    return {p: (o["verdict"], o["check"], o.get("out_of_bounds")) for p, o in out.items()}


def test_a_shared_capture_stops_at_the_view_too():
    # --share-trace compiles and runs Inductor in run_shared, before _judged's guard: it
    # let the custom op write past buf0 (glibc: 'free(): invalid next size'). In a child,
    # whose death is the failure this test would show
    import json
    from pathlib import Path

    from aliasfuzz.fuzz.isolated import run_isolated
    from aliasfuzz.passes.pipelines import PipelineOptions
    from aliasfuzz.passes.shared import plan

    entry = Path(__file__).resolve().parents[2] / "corpus" / "crash-lowering-5fcbc5cdc0"
    program = json.loads((entry / "program.json").read_text())
    from aliasfuzz.fuzz.ir import Program

    both = {p: PipelineOptions() for p in ("aot_eager", "inductor")}
    assert plan(Program.from_json(program), list(both), "cpu", both) == list(both)  # shared
    got = run_isolated(f"{__name__}:_shared_outcomes", (program,), check_heap=True)
    assert got == {
        "aot_eager": ("ok", None, None),
        "inductor": ("crash", "out-of-bounds", [
            "Inductor's wrapper made reinterpret_tensor(buf, (2, 1), (3, 1), 11) of a storage "
            "of 10 elements, reaching elements 11 to 14: out of bounds"]),
    }, got

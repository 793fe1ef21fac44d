"""Mutational generation (issue 15): :mod:`aliasfuzz.fuzz.mutate` and a campaign's program
``i`` with ``--mutate`` (:mod:`aliasfuzz.campaign.sources`)."""

from __future__ import annotations

import json
import random
from collections import Counter
from pathlib import Path

import pytest

from aliasfuzz.campaign import sources
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.mutate import OPERATORS, STATIC_TWIN, mutate
from aliasfuzz.fuzz.sample import generate_one
from aliasfuzz.fuzz.validate import infer

SEEDS = Path(__file__).resolve().parents[2] / "corpus" / "seeds"


def _subjects() -> list[Program]:
    twins = [Program.loads(f.read_text()) for f in sorted(SEEDS.glob("*.json"))]
    return twins + [generate_one(3, i) for i in range(12)]


def test_every_operator_makes_valid_mutants_of_seeds_and_generated_programs():
    made: Counter = Counter()
    for k, p in enumerate(_subjects()):
        for t in range(4):
            m = mutate(p, random.Random(f"{k}:{t}"))
            assert m is not None and m != p
            infer(m)  # type-checks, one eager meaning
            assert m.outputs == p.outputs
            made[m.meta["mutation"]] += 1
    assert set(made) == set(OPERATORS), made


def test_a_mutant_is_a_function_of_the_program_and_the_stream():
    p = _subjects()[0]
    a, b = mutate(p, random.Random("x")), mutate(p, random.Random("x"))
    assert a == b and a.meta == b.meta


def _two_inputs() -> Program:
    storages = (StorageSpec("s0", 6), StorageSpec("s1", 6))
    inputs = (TensorSpec("x0", "s0", (2, 3), (3, 1)), TensorSpec("x1", "s1", (2, 3), (3, 1)))
    body = (Op("add_.Scalar", ("x0",), {"other": 1.0}, ("v0",)),
            Op("mul", ("x1", "x1"), {}, ("v1",)))
    return Program(storages, inputs, body, ("v1",))


def _apply(name: str, p: Program) -> Program:
    for t in range(50):
        m = OPERATORS[name](p, random.Random(t))
        if m is not None:
            infer(m)
            return m
    raise AssertionError(f"{name} never applied")


def test_each_operator_does_what_its_name_says():
    p = _two_inputs()
    # relayout: same shapes, another layout, the storage grown to hold it
    m = _apply("relayout-input", p)
    assert [t.shape for t in m.inputs] == [t.shape for t in p.inputs] and m.inputs != p.inputs
    assert all(m.storage_by_name[t.storage].numel >= t.span for t in m.inputs)
    # alias: both inputs on one storage, the other storage gone
    m = _apply("alias-inputs", p)
    assert len({t.storage for t in m.inputs}) == 1 and len(m.storages) == 1
    # a same-shape view between a producer and its reader
    m = _apply("insert-view", p)
    (view,) = [op for op in m.body if op.op == "view"]
    assert list(view.params["shape"]) == [2, 3] and len(m.body) == 3
    assert any(view.out[0] in op.args for op in m.body)
    # independent neighbours trade places; an unread statement goes
    assert _apply("move-statement", p).body == p.body[::-1]
    assert _apply("drop-statement", p).body == p.body[1:]
    # another op of the same kind, on the same arguments and names
    m = _apply("swap-op", p)
    k = next(k for k in range(2) if m.body[k].op != p.body[k].op)
    assert (m.body[k].args, m.body[k].out) == (p.body[k].args, p.body[k].out)


def test_nothing_to_mutate_gives_none():
    p = Program((StorageSpec("s0", 1),), (TensorSpec("x0", "s0", (), ()),), (), ())
    assert mutate(p, random.Random(0)) is None


def test_a_campaign_s_program_i_mutates_its_share_from_the_saved_sources(tmp_path):
    corpus = tmp_path / "corpus"
    (corpus / "bad-0000000001").mkdir(parents=True)
    (corpus / "bad-0000000001" / "program.json").write_text("{not json")  # left out
    found = sources.collect(corpus)
    assert found and all(i.startswith("seeds/") for i, _ in found)
    run = tmp_path / "run"
    run.mkdir()
    sources.save(run, found)
    assert sources.load(run) == found
    progs = sources.Programs(7, 8, 0.5, sources.load(run))
    mutants = [progs[i] for i in range(40)]
    share = sum(p.meta.get("generator") == "mutation" for p in mutants) / 40
    assert 0.2 <= share <= 0.8, share
    for i, p in enumerate(mutants):
        if p.meta.get("generator") == "mutation":
            assert p.meta["mutated_from"] in dict(found) and p.meta["index"] == i
        else:
            assert p == generate_one(7, i)
    assert [progs[i] for i in range(40)] == mutants  # a resume draws the same programs
    off = sources.Programs(7, 8, 0.0, found)
    assert all(off[i] == generate_one(7, i) for i in range(5))


def test_a_corrupt_sources_file_and_a_bad_share_are_one_line_errors(tmp_path):
    (tmp_path / sources.FILE).write_text(json.dumps({"id": "x"}) + "\n")
    with pytest.raises(InvalidArgument, match=r"mutation-sources.jsonl:1: not a mutation source"):
        sources.load(tmp_path)
    for bad in (-0.1, 1.5, float("nan")):
        with pytest.raises(InvalidArgument, match="--mutate must be a share between 0 and 1"):
            CampaignOptions(programs=1, mutate=bad).validate()
    with pytest.raises(InvalidArgument, match="option mutate must be a share"):
        CampaignOptions(programs=1, mutate=True).validate()


def test_drop_statement_keeps_every_write_of_a_program_with_empty_like_memory():
    # seed b16 fills empty_like(other) with tk.flat_add(z, other, out), a statement that
    # binds nothing: dropping it returned the uninitialized memory (no single eager meaning)
    p = Program.loads((SEEDS / "b16_triton_flat_indexing_layout.json").read_text())
    assert any(op.op == "empty_like" for op in p.body)
    for t in range(40):
        m = OPERATORS["drop-statement"](p, random.Random(t))
        if m is not None:
            assert any(op.op == "tk.flat_add" for op in m.body), m.body
    # without empty_like, a write nobody reads may go (a mutation is a legit variant)
    q = Program((StorageSpec("s0", 4),), (TensorSpec("x", "s0", (4,), (1,)),),
                (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),
                 Op("sin", ("x",), {}, ("v1",))), ("v1",))
    assert OPERATORS["drop-statement"](q, random.Random(0)).body == q.body[1:]


def test_a_source_compiled_with_dynamic_shapes_gives_its_static_twin():
    # audit 36: a dynamic-shape crash masked Inductor's static miscompile of the same program
    p = _two_inputs()
    dyn = Program(p.storages, p.inputs, p.body, p.outputs, {**p.meta, "dynamic": True})
    twins = [m for t in range(40) if (m := mutate(dyn, random.Random(t))).meta["mutation"] == STATIC_TWIN]
    assert 10 <= len(twins) <= 30  # half the draws, first
    assert all(m.body == dyn.body and m.inputs == dyn.inputs and m.outputs == dyn.outputs
               and "dynamic" not in m.meta for m in twins)
    # a static program never draws it
    assert all(mutate(p, random.Random(t)).meta["mutation"] != STATIC_TWIN for t in range(40))
    # a campaign mutating the dynamic entry runs the twin, as a mutant of its own
    progs = sources.Programs(seed=5, max_statements=8, mutate=1.0, sources=[("entry-d", dyn)])
    made = [progs[i] for i in range(40)]
    static = [m for m in made if m.meta.get("mutation") == STATIC_TWIN and not m.meta.get("dynamic")]
    assert static and all(m.body == dyn.body and m.meta["mutated_from"] == "entry-d" for m in static)

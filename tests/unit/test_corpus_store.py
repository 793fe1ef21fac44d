"""The corpus store: atomic entries, JSON-only loading, signatures, temp cleanup."""

from __future__ import annotations

import json
import re

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec


def _program(n_ops: int = 2) -> Program:
    body = [Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)), Op("sin", ("v0",), {}, ("v1",))]
    return Program(
        (StorageSpec("s0", 16),),
        (TensorSpec("x", "s0", (4, 4), (4, 1)),),
        tuple(body[:n_ops]),
        ("v1",) if n_ops == 2 else ("v0",),
    )


def _meta(program: Program, verdict: str = "miscompile") -> dict:
    out = {"verdict": verdict, "check": "values", "decision_kinds": ["inplaceable"]}
    return {
        "root": store.roots(program, out, "inductor", None)[0],
        "expected": {"pipeline": "inductor", "verdict": verdict, "check": "values"},
        "explanation": "x differs",
        "versions": store.versions(),
    }


def test_prekey_signature_names_pipeline_verdict_check_and_kinds():
    sig = store.signature(
        _program(),
        {"verdict": "miscompile", "check": "values", "decision_kinds": ["b", "a", "a"]},
        "inductor",
    )
    assert sig == {
        "pipeline": "inductor",
        "verdict": "miscompile",
        "check": "values",
        "decision_kinds": ["a", "b"],
        "op_kinds": ["functional", "inplace"],
    }


def test_roots_key_blamed_stage_verdict_check_class_and_evidence():
    p = _program()
    out = {"verdict": "miscompile", "check": "inputs", "decisions": [
        {"kind": "scatter", "reinplaced": True, "truth": "unsafe", "rule": 3, "claim": None},
        {"kind": "auto_functionalized_v2", "reinplaced": True, "truth": "safe", "rule": None,
         "claim": None},
    ]}
    blame = {"stages": ["functionalization", "reinplace"]}
    first, second = store.roots(p, out, "inductor", blame)
    # inputs and values are one check class; the pipeline is not part of the key
    assert first == {"stage": "functionalization", "verdict": "miscompile", "check": "values",
                     "evidence": ["functional", "inplace"]}
    assert second["evidence"] == ["scatter:rule 3"]  # the pass's unsafe decision
    assert store.roots(p, out, "aot_eager", blame) == [first, second]
    assert store.entry_id(first).startswith("miscompile-functionalization-")
    assert store.entry_id(first) != store.entry_id(second)
    unblamed = store.roots(p, out, "inductor", None)[0]
    assert unblamed["stage"] == "unblamed:inductor"
    missed = {"verdict": "missed-reinplace", "check": "candidates", "decisions": [
        {"kind": "scatter", "reinplaced": False, "truth": "safe", "claim": "missed-reinplace"}]}
    assert store.roots(p, missed, "inductor", {"stages": ["reinplace"]})[0]["evidence"] == [
        "scatter:missed"
    ]
    # a cost finding: no stage, and the spelling rule joins the features
    cost = {"verdict": "missed-reinplace", "check": "witness", "witness_rule": "augmented-setitem"}
    (root,) = store.roots(p, cost, "inductor", None)
    assert root == {"stage": "unblamed:inductor", "verdict": "missed-reinplace", "check": "witness",
                    "evidence": ["functional", "inplace", "witness:augmented-setitem"]}
    other = store.roots(p, {**cost, "witness_rule": "graph-split"}, "inductor", None)[0]
    assert store.entry_id(other) != store.entry_id(root)


def test_a_second_sighting_is_a_hit_of_the_same_entry(tmp_path):
    p = _program()
    path, _ = store.write_entry(tmp_path, p, {**_meta(p), "hits": [{"pipeline": "inductor",
                                "campaign": "c1", "program_index": 3}]})
    hit = {"pipeline": "aot_eager", "campaign": "c2", "program_index": 7}
    assert store.add_hit(path, hit)
    assert not store.add_hit(path, hit)  # the same sighting once
    hits = store.load_entry(path).meta["hits"]
    assert [(h["pipeline"], h["program_index"]) for h in hits] == [("inductor", 3), ("aot_eager", 7)]


def test_a_hit_whose_program_is_already_there_is_stored_as_a_reference(tmp_path):
    from dataclasses import replace

    from aliasfuzz.campaign.repro import _sightings

    p = _program()
    path, _ = store.write_entry(tmp_path, p, {**_meta(p), "hits": []})
    other = replace(p, outputs=p.outputs[:0] + p.outputs)  # the same program, re-spelled
    bigger = replace(p, meta={"index": 9})
    assert store.add_hit(path, {"pipeline": "aot_eager", "campaign": "c", "program_index": 1,
                                "program": other.to_json()})
    different = p.to_json() | {"outputs": []}
    assert store.add_hit(path, {"pipeline": "inductor", "campaign": "c", "program_index": 2,
                                "program": different})
    assert store.add_hit(path, {"pipeline": "torchscript", "campaign": "c", "program_index": 3,
                                "program": {**different, "meta": {"index": 3}}})
    assert store.add_hit(path, {"pipeline": "fx-reinplace", "campaign": "c", "program_index": 4,
                                "program": bigger.to_json()})
    hits = store.load_entry(path).meta["hits"]
    assert [h.get("program_of", "copy") for h in hits] == ["entry", "copy", 1, "entry"]
    assert all("program" not in h for h in hits if "program_of" in h)
    # the repro still sees every sighting's program
    got = [(q.outputs, same) for q, _, same in _sightings(p, store.load_entry(path).meta)]
    assert got == [(p.outputs, True), (p.outputs, True), ((), False), ((), False),
                   (p.outputs, True)]


def test_write_then_load_round_trips(tmp_path):
    p = _program()
    path, created = store.write_entry(tmp_path, p, _meta(p))
    assert created and path.parent == tmp_path
    assert sorted(f.name for f in path.iterdir()) == ["meta.json", "program.json", "repro.py"]
    entry = store.load_entry(path)
    assert entry.program == p
    assert entry.meta["expected"]["verdict"] == "miscompile"
    assert entry.meta["versions"]["torch"]
    # the same signature again is a duplicate: nothing rewritten
    again, created2 = store.write_entry(tmp_path, p, _meta(p))
    assert again == path and not created2
    assert not list(tmp_path.glob(".tmp-*"))


def test_repro_is_standalone_python(tmp_path):
    p = _program()
    path, _ = store.write_entry(tmp_path, p, _meta(p))
    src = (path / "repro.py").read_text()
    compile(src, "repro.py", "exec")
    assert "import aliasfuzz" not in src and "from aliasfuzz" not in src
    assert "def inputs" in src and "def f(" in src and "torch.compile" in src


@pytest.mark.parametrize(("key", "value", "needle"), [
    ("hits", "oops", "hits must be a list"),
    ("hits", [1], "hits[0] must be an object"),
    ("hits", [{"pipeline": 3}], "hits[0].pipeline must be a string"),
    ("hits", [{"program_index": True}], "hits[0].program_index must be an integer"),
    ("hits", [{"program": "p"}], "hits[0].program must be an object"),
    ("root", "r", "root must be an object"),
    ("root", {"stage": "reinplace", "verdict": "miscompile", "check": "values"},
     "root.evidence missing"),
    ("root", {"stage": 1, "verdict": "miscompile", "check": "values", "evidence": []},
     "root.stage must be a string"),
    ("root", {"stage": "s", "verdict": "miscompile", "check": "values", "evidence": "e"},
     "root.evidence must be a list"),
    ("expected", {"pipeline": "aot_eager", "verdict": "ok", "check": 3},
     "expected.check must be a string or null"),
    ("stages", "reinplace", "stages must be a list"),
    ("known", "x#1", "known must be an object or null"),
    ("explanation", ["x"], "explanation must be a string"),
    # fresh user 39's B11: replayed as "changed", exit 1
    ("expected", {"pipeline": "aot_eager", "verdict": "bogus-verdict", "check": None},
     "expected.verdict: unknown verdict 'bogus-verdict'"),
    # fresh user 55's B2: run and replay went on with these
    ("meta_version", 7, "meta_version 7 is not one this aliasfuzz reads (1 to 2)"),
    ("root", {"stage": "reinplace", "verdict": "miscompil", "check": "values", "evidence": []},
     "root.verdict: unknown verdict 'miscompil'"),
    ("hits", [{"pipeline": "inductr"}], "hits[0].pipeline 'inductr' is no pipeline"),
    ("hits", [{"pipeline": "inductor", "verdict": "oops"}], "hits[0].verdict: unknown verdict 'oops'"),
    ("root", {"stage": "reinplace", "verdict": "miscompile", "check": "values", "evidence": ["x"]},
     "does not hash to the entry's id"),
])
def test_a_meta_key_of_the_wrong_type_is_corrupt(tmp_path, key, value, needle):
    # fresh user 21: "hits": "oops" passed replay, report and run's start-up check
    p = _program()
    path, _ = store.write_entry(tmp_path, p, _meta(p))
    store.load_entry(path)  # the entry as written loads
    m = json.loads((path / "meta.json").read_text())
    m[key] = value
    (path / "meta.json").write_text(json.dumps(m))
    with pytest.raises(InvalidArgument, match=re.escape(needle)) as e:
        store.load_entry(path)
    assert str(path / "meta.json") in str(e.value) and "\n" not in str(e.value)


@pytest.mark.parametrize("damage", ["bad-json", "no-program", "bad-program", "no-expected"])
def test_corrupt_entries_raise_invalid_argument(tmp_path, damage):
    p = _program()
    path, _ = store.write_entry(tmp_path, p, _meta(p))
    if damage == "bad-json":
        (path / "meta.json").write_text("{not json")
    elif damage == "no-program":
        (path / "program.json").unlink()
    elif damage == "bad-program":
        d = json.loads((path / "program.json").read_text())
        d["body"][0]["args"] = ["nope"]
        (path / "program.json").write_text(json.dumps(d))
    else:
        m = json.loads((path / "meta.json").read_text())
        del m["expected"]
        (path / "meta.json").write_text(json.dumps(m))
    with pytest.raises(InvalidArgument):
        store.load_entry(path)


def test_loading_never_executes_code(tmp_path, monkeypatch):
    p = _program()
    path, _ = store.write_entry(tmp_path, p, _meta(p))
    marker = tmp_path / "executed"
    (path / "repro.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    m = json.loads((path / "meta.json").read_text())
    m["explanation"] = f"__import__('os').system('touch {marker}')"
    (path / "meta.json").write_text(json.dumps(m))
    store.load_entry(path)
    assert not marker.exists()


def test_temp_folders_are_invisible_and_cleaned(tmp_path):
    p = _program()
    store.write_entry(tmp_path, p, _meta(p))
    # the suffix is the writer's pid: one no system has (pid 123 was alive on the H200 host)
    half = tmp_path / ".tmp-miscompile-x-999999999"
    half.mkdir()
    (half / "program.json").write_text("{")
    assert [e.name for e in store.list_entries(tmp_path)] == [store.entry_id(_meta(p)["root"])]
    assert store.clean_temp(tmp_path) == [half]
    assert not half.exists()


def test_clean_temp_leaves_a_live_writers_folder(tmp_path):
    import os

    from aliasfuzz.campaign.corpus import clean_temp

    live = tmp_path / f".tmp-entry-{os.getppid()}"  # another campaign still writing
    dead = tmp_path / ".tmp-entry-999999999"  # a killed writer's leftovers
    for d in (live, dead):
        d.mkdir()
    assert clean_temp(tmp_path) == [dead]
    assert live.is_dir() and not dead.exists()


def _layout(root: str, fuzz_root: str | None = None, wheel: bool = False) -> dict[str, str]:
    """Package -> ``__init__.py`` of an editable install at ``root`` (``fuzz``, ``oracle``,
    ``passes`` from ``fuzz_root`` when given) or of a wheel under ``root``."""
    top = f"{root}/aliasfuzz"
    mapped = top if wheel else (fuzz_root or root)
    files = {"aliasfuzz": f"{top}/__init__.py"}
    files |= {f"aliasfuzz.{p}": f"{mapped}/{p}/__init__.py" for p in ("fuzz", "oracle", "passes")}
    files |= {f"aliasfuzz.{p}": f"{top}/{p}/__init__.py" for p in ("campaign", "report")}
    return files


def test_a_campaign_refuses_aliasfuzz_put_together_from_two_source_trees():
    # audit 22 c9602fbf04: /work/c22's driver ran /work/main's oracle (c22's .venv was
    # main's), main moved on mid-run, and the cut's ImportError filed the finding unblamed
    from aliasfuzz.campaign.corpus import mixed_sources

    assert mixed_sources() is None  # this checkout's own environment
    assert mixed_sources(_layout("/work/c22")) is None  # editable, one tree
    assert mixed_sources(_layout("/venv/site-packages", wheel=True)) is None
    assert mixed_sources(_layout("/home/u/aliasfuzz")) is None  # a clone named aliasfuzz
    said = mixed_sources(_layout("/work/c22", fuzz_root="/work/main"))
    assert said is not None and "aliasfuzz.oracle from /work/main/oracle" in said
    assert "aliasfuzz.campaign" not in said
    wheel_and_tree = _layout("/venv/site-packages", wheel=True)
    wheel_and_tree["aliasfuzz.campaign"] = "/work/c22/aliasfuzz/campaign/__init__.py"
    assert "aliasfuzz.campaign from /work/c22/aliasfuzz/campaign" in (
        mixed_sources(wheel_and_tree) or "")


def test_run_campaign_refuses_mixed_sources_before_any_work(tmp_path, monkeypatch):
    from aliasfuzz.campaign.driver import run_campaign
    from aliasfuzz.campaign.options import CampaignOptions

    monkeypatch.setattr(store, "mixed_sources", lambda: "aliasfuzz is imported from two trees")
    state = tmp_path / "state"
    with pytest.raises(InvalidArgument, match="imported from two trees"):
        run_campaign(CampaignOptions(programs=1, state=str(state), corpus=str(tmp_path)))
    assert not state.exists()  # no campaign directory was made


def _add_hits(path: str, campaign: str, n: int, go) -> None:
    go.wait()
    for k in range(n):
        store.add_hit(path, {"pipeline": "inductor", "campaign": campaign, "program_index": k})


def test_two_campaigns_adding_sightings_at_once_lose_none(tmp_path):
    # fresh user 28 ran a second campaign beside one in flight on the same corpus: each
    # sighting is a read-modify-write of meta.json, which loses the other's without a lock
    import multiprocessing

    p = _program()
    path, _ = store.write_entry(tmp_path, p, {**_meta(p), "hits": []})
    ctx = multiprocessing.get_context("fork")
    go = ctx.Event()
    procs = [ctx.Process(target=_add_hits, args=(str(path), c, 12, go)) for c in ("c1", "c2")]
    for proc in procs:
        proc.start()
    go.set()
    for proc in procs:
        proc.join(120)
    assert [proc.exitcode for proc in procs] == [0, 0]
    hits = store.load_entry(path).meta["hits"]
    assert sorted((h["campaign"], h["program_index"]) for h in hits) == sorted(
        (c, k) for c in ("c1", "c2") for k in range(12))


def test_an_entry_records_the_thread_count_and_its_cpu_repro_says_it():
    # thirtieth audit: 0f197b5fa1's vectorized C++ kernel fails with two threads, not one
    import torch

    from aliasfuzz.campaign.repro import render_repro

    assert store.versions()["threads"] == str(torch.get_num_threads())
    p = _program()
    meta = {**_meta(p), "id": "x", "versions": {**store.versions(), "threads": "2"}}
    assert "torch 2" in render_repro(p, meta) and ", 2 CPU threads)." in render_repro(p, meta)
    meta["versions"] = {k: v for k, v in meta["versions"].items() if k != "threads"}
    assert "CPU thread" not in render_repro(p, meta)  # an entry of old: rendered as before


def test_an_entry_whose_id_is_not_its_folder_name_is_corrupt(tmp_path):
    # fresh user 30: a meta.json id edited (or a folder renamed) replayed as "reproduces"
    p = _program()
    path, _ = store.write_entry(tmp_path, p, _meta(p))
    store.load_entry(path)
    moved = path.rename(tmp_path / "renamed")
    with pytest.raises(InvalidArgument, match="is not the entry's folder name 'renamed'"):
        store.load_entry(moved)


#: The two functionalization errors audit 38 found in one entry (8157ca25a3), both behind a
#: program whose needed features were ``inplace`` and ``view``.
_BOOL_SUB = ("RuntimeError: Subtraction, the `-` operator, with two bool tensors is not "
             "supported. Use the `^` or `logical_xor()` operator instead.")
_OVERLAP = ("RuntimeError: While executing unfold, functionalization encountered a tensor "
            "being mutated that has internal overlap. When using torch.compile (or running "
            "functionalization directly), this is banned as the behavior is not well defined.")


def _crash(error: str) -> tuple[dict, dict]:
    out = {"verdict": "crash", "check": "exceptions",
           "explanation": f"compiled raises _Failed: trace: {error}; eager does not"}
    blame = {"stage": "functionalization", "stages": ["functionalization"],
             "trail": [["decomposition", "agrees"],
                       ["functionalization", f"departs (raises {error})"]]}
    return out, blame


def test_two_errors_of_one_stage_behind_the_same_features_are_two_roots(tmp_path):
    p = _program()
    (bool_sub,) = store.roots(p, _crash(_BOOL_SUB)[0], "aot_eager", _crash(_BOOL_SUB)[1])
    (overlap,) = store.roots(p, _crash(_OVERLAP)[0], "aot_eager", _crash(_OVERLAP)[1])
    assert store.entry_id(bool_sub) != store.entry_id(overlap)
    assert bool_sub["evidence"][:2] == ["functional", "inplace"]
    assert any(e.startswith("raises:RuntimeError: Subtraction") for e in bool_sub["evidence"])

    def rec(error, index):
        out, blame = _crash(error)
        return store.record(tmp_path, p, p, out, "aot_eager", blame, [],
                            {"campaign": "t", "seed": 0, "program_index": index}).paths

    first, second, again = rec(_BOOL_SUB, 1), rec(_OVERLAP, 2), rec(_BOOL_SUB, 3)
    assert first != second and again == first
    hits = json.loads((first[0] / "meta.json").read_text())["hits"]
    assert [h["program_index"] for h in hits] == [1, 3]


def test_an_entry_keyed_before_the_error_still_takes_its_sightings(tmp_path):
    # corpus entries written before ``raises:`` joined the key: the same error is the same
    # bug (rootclass.same_bug), so a new sighting is one more hit, not a second entry
    p = _program()
    out, blame = _crash(_BOOL_SUB)
    (root,) = store.roots(p, out, "aot_eager", blame)
    old_root = {**root, "evidence": [e for e in root["evidence"] if not e.startswith("raises:")]}
    meta = {**_meta(p, "crash"), "root": old_root, "stages": ["functionalization"],
            "trail": blame["trail"], "ops": ["add_.Scalar", "sin"]}
    old, _ = store.write_entry(tmp_path, p, meta)
    got = store.record(tmp_path, p, p, out, "aot_eager", blame, [],
                       {"campaign": "t", "seed": 0, "program_index": 7}).paths
    assert got == (old,)


def test_a_sighting_s_explanation_is_stored_cut_at_a_word(tmp_path):
    # fresh user 49's B8: "... it allocates 32 bytes of temporari)" in a report row
    p = _program()
    out, blame = _crash(_BOOL_SUB)
    out = {**out, "explanation": "compiled raises " + "temporaries " * 40}
    (path,) = store.record(tmp_path, p, p, out, "aot_eager", blame, [],
                           {"campaign": "t", "seed": 0, "program_index": 1}).paths
    (hit,) = json.loads((path / "meta.json").read_text())["hits"]
    assert len(hit["explanation"]) <= 300 and hit["explanation"].endswith("temporaries...")


def test_a_sighting_whose_program_does_not_validate_is_a_corrupt_entry(tmp_path):
    # fresh user 57's B2: "program": {"schema": 1, "body": "junk"} in a hit was replayed as
    # "reproduces" and accepted by run, where the same fault in program.json is refused
    import shutil
    from pathlib import Path

    src = Path(__file__).resolve().parents[2] / "corpus" / "miscompile-functionalization-cbd3794b15"
    entry = tmp_path / src.name
    shutil.copytree(src, entry)
    meta = json.loads((entry / "meta.json").read_text())
    store.load_entry(entry)  # as committed
    meta["hits"][0]["program"] = {"schema": 1, "body": "junk"}
    (entry / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InvalidArgument, match=r"meta.json: hits\[0\]\.program: "):
        store.load_entry(entry)
    # a well-formed program of another sighting stays accepted
    meta["hits"][0]["program"] = _program().to_json()
    (entry / "meta.json").write_text(json.dumps(meta))
    store.load_entry(entry)

"""Replay of corpus entries: the repository's corpus/ (one test per committed entry; entries
git does not track, new findings of a local campaign, are skipped with the reason:
``tests/common/corpus_entries.py``) and a built corpus with a reproducing, a fixed, a
changed and a corrupt entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign.replay import print_rows, replay_rows
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from tests.common.corpus_entries import committed_entries, entry_params

ROOT = Path(__file__).resolve().parents[2]
ENTRIES, UNTRACKED_ENTRIES = committed_entries(ROOT / "corpus")


@pytest.fixture(scope="module")
def repository_rows():
    """One replay of the repository corpus' committed entries (one worker for all)."""
    return {r.entry: r for r in replay_rows([str(p) for p in ENTRIES], timeout=300)}


@pytest.mark.parametrize("entry", entry_params(ENTRIES, UNTRACKED_ENTRIES))
def test_repository_corpus_entry_reproduces_or_is_fixed(entry, repository_rows):
    row = repository_rows[entry.name]
    assert row.status in ("reproduces", "fixed"), row


def _write(corpus: Path, body, verdict: str, pipeline: str = "debug-miscompile") -> Path:
    p = Program(
        (StorageSpec("s0", 16),), (TensorSpec("x", "s0", (4, 4), (4, 1)),), body, (body[-1].out[0],)
    )
    out = {"verdict": verdict, "check": "values"}
    meta = {
        "root": store.roots(p, out, pipeline, None)[0],
        "expected": {"pipeline": pipeline, "verdict": verdict, "check": "values"},
    }
    return store.write_entry(corpus, p, meta)[0]


def test_replay_table_statuses_and_exit_codes(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    c = tmp_path / "corpus"
    inplace = (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),)
    functional = (Op("sin", ("x",), {}, ("v0",)),)
    repro = _write(c, inplace, "miscompile")  # the debug pipeline still says miscompile
    fixed = _write(c, functional, "miscompile")  # now ok
    changed = _write(c, inplace, "crash")  # recorded crash, now miscompile
    broken = c / "zz-broken"
    broken.mkdir()
    (broken / "meta.json").write_text(json.dumps({"expected": {"pipeline": "x"}}))
    rows = replay_rows([str(c)])  # one worker for all entries
    assert {r.entry: r.status for r in rows} == {
        repro.name: "reproduces",
        fixed.name: "fixed",
        changed.name: "changed",
        "zz-broken": "corrupt",
    }
    by = {r.entry: r for r in rows}
    assert print_rows([by[repro.name], by[fixed.name]]) == 0
    assert print_rows([by[repro.name], by[changed.name]]) == 1
    capsys.readouterr()
    assert print_rows(rows) == 2  # a corrupt entry is reported; the others still ran
    cap = capsys.readouterr()
    out = cap.out
    assert "zz-broken" in out and "corrupt" in out and "1 reproduces, 1 fixed, 1 changed" in out
    # the corrupt entry is one line on stderr that names it and why
    [line] = cap.err.splitlines()
    assert line.startswith("aliasfuzz: error: corrupt entry zz-broken: ") and "expected" in line


@pytest.mark.parametrize("entry", entry_params(ENTRIES, UNTRACKED_ENTRIES))
def test_repository_corpus_repro_is_what_the_renderer_writes(entry):
    # a fresh user ran a committed repro.py that an older renderer wrote (no
    # force_disable_caches, an old title): after a renderer change, re-render the corpus
    from aliasfuzz.campaign.repro import render_repro

    e = store.load_entry(entry)
    assert (entry / "repro.py").read_text() == render_repro(e.program, e.meta), (
        f"{entry.name}/repro.py is stale: re-render it (campaign.repro.render_repro)")


@pytest.mark.parametrize("entry", entry_params(ENTRIES, UNTRACKED_ENTRIES))
def test_repository_corpus_entry_has_one_hit_per_sighting(entry):
    # fresh user 39's B17: crash-lowering-5fcbc5cdc0 held two hits of one (pipeline,
    # campaign, program index), left by a merge; add_hit never writes such a pair
    hits = store.load_entry(entry).meta.get("hits") or []
    keys = [(h.get("pipeline"), h.get("campaign"), h.get("program_index")) for h in hits]
    assert len(keys) == len(set(keys)), [k for k in keys if keys.count(k) > 1]


def test_replay_says_which_rows_are_the_harness_alone_where_the_repro_needs_a_gpu(capsys):
    # fresh user 33: replay said "reproduces" for an entry whose repro.py, on the same
    # host, said "CANNOT RUN HERE: needs a GPU"
    import torch

    from aliasfuzz.campaign.replay import ReplayRow, _repro_needs_gpu

    if torch.cuda.is_available():
        pytest.skip("this host has the GPU the repro needs")
    gpu = store.load_entry(ROOT / "corpus" / "miscompile-functionalization-cbd3794b15")
    cpu = store.load_entry(ROOT / "corpus" / "miscompile-functionalization-ec5377b470")
    assert (_repro_needs_gpu(gpu), _repro_needs_gpu(cpu)) == (True, False)
    rows = [ReplayRow(gpu.id, "reproduces", "a", "a", "", True),
            ReplayRow(cpu.id, "reproduces", "b", "b", "", False)]
    assert print_rows(rows) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last == ("note: judged by aliasfuzz's harness only here, their repro.py needing a "
                    f"GPU (exit 3 on this host): {gpu.id}"), last
    # fresh user 53's B5: a deleted repro.py was also said to need a GPU
    assert print_rows([ReplayRow(gpu.id, "reproduces", "a", "a", "", True, "missing")]) == 0
    out = capsys.readouterr().out
    assert "needing a GPU" not in out and f"{gpu.id} (missing)" in out, out


def test_replay_notes_an_entry_whose_repro_is_missing_or_broken(tmp_path, monkeypatch, capsys):
    # fresh user 39's B10: a deleted repro.py, and one turned into a syntax error, both
    # replayed "reproduces" with nothing said
    from aliasfuzz.campaign.replay import repro_problem

    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")
    c = tmp_path / "corpus"
    a = _write(c, (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),), "miscompile")
    b = _write(c, (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),), "crash")
    assert a != b and repro_problem(a) == repro_problem(b) == ""  # as written
    (a / "repro.py").unlink()
    (b / "repro.py").write_text((b / "repro.py").read_text() + "\ndef f(((\n")
    rows = replay_rows([str(c)])
    assert {r.entry: r.status for r in rows} == {a.name: "reproduces", b.name: "changed"}
    capsys.readouterr()
    assert print_rows(rows) == 1  # the harness's verdicts stand; the repros are noted
    out = capsys.readouterr().out
    [note] = [x for x in out.splitlines() if x.startswith("note: judged by aliasfuzz's harness only, their repro.py not")]
    assert f"{a.name} (missing)" in note and f"{b.name} (not valid Python: SyntaxError" in note, note

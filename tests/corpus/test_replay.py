"""Replay of corpus entries: the repository's corpus/ (one test per entry) and a built
corpus with a reproducing, a fixed, a changed and a corrupt entry."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign.replay import replay, replay_rows
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec

ROOT = Path(__file__).resolve().parents[2]
ENTRIES = store.list_entries(ROOT / "corpus")


@pytest.mark.slow
@pytest.mark.parametrize("entry", ENTRIES, ids=[p.name for p in ENTRIES])
def test_repository_corpus_entry_loads_and_replays(entry):
    (row,) = replay_rows([str(entry)], timeout=300)
    assert row.status in ("reproduces", "fixed"), row


def _write(corpus: Path, body, verdict: str, pipeline: str = "debug-miscompile") -> Path:
    p = Program(
        (StorageSpec("s0", 16),), (TensorSpec("x", "s0", (4, 4), (4, 1)),), body, (body[-1].out[0],)
    )
    out = {"verdict": verdict, "check": "values"}
    meta = {
        "signature": store.signature(p, out, pipeline),
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
    rows = {r.entry: r.status for r in replay_rows([str(c)])}
    assert rows == {repro.name: "reproduces", fixed.name: "fixed", changed.name: "changed"}
    assert replay([str(repro), str(fixed)]) == 0
    assert replay([str(c)]) == 1
    broken = c / "zz-broken"
    broken.mkdir()
    (broken / "meta.json").write_text(json.dumps({"expected": {"pipeline": "x"}}))
    capsys.readouterr()
    assert replay([str(c)]) == 2  # reported, and the others still ran
    out = capsys.readouterr().out
    assert "zz-broken" in out and "corrupt" in out and "1 reproduces, 1 fixed, 1 changed" in out

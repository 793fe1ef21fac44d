"""The rebuild (``python -m aliasfuzz.campaign.rebuild``): every sighting of an entry is
re-judged, and the repository's corpus is what the current code would write, so that a
campaign seeded with it files no stale root cause twice.

Campaign 47 wrote ``miscompile-functionalization-ec5377b470`` and
``crash-ts-optimizer-1ccd29630f`` as new while ``corpus/`` held the same bugs under the keys
an older blame gave them (``miscompile-lowering-14820e672b``,
``crash-unblamed-torchscript-8691e5ac2a``): when the blame improves, the committed entries
must be rebuilt, and the fixed-point test below says which."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign.rebuild import rebuilt
from aliasfuzz.errors import clip
from tests.common.corpus_entries import committed_copy, committed_entries, entry_params

ROOT = Path(__file__).resolve().parents[2]
ENTRIES, UNTRACKED_ENTRIES = committed_entries(ROOT / "corpus")
#: a rebuild on a host that cannot run the finding's pipeline drops it with this reason
#: (a user Triton kernel under full Inductor needs a GPU): not a stale entry
_CANNOT_RUN_HERE = "cannot run this program here"


def _sightings(meta: dict) -> list[tuple]:
    return sorted((h["pipeline"], h["campaign"], h["program_index"]) for h in meta["hits"])


def test_rebuild_re_judges_every_sighting_of_an_entry(tmp_path):
    # the first rebuild re-judged only an entry's own program: 13 of the corpus' 36 hits
    # (other pipelines, other campaigns' programs) were lost
    name = "miscompile-functionalization-c10211248b"
    old = tmp_path / "old"
    committed_copy(ROOT / "corpus" / name, old)
    before = store.load_entry(old / name).meta
    assert len(before["hits"]) == 2
    rows = list(rebuilt([str(old)], tmp_path / "new", budget=10))
    assert [r[0] for r in rows] == [name, f"{name} hit 1 (fx-reinplace)"], rows
    assert all(ids == [name] for _, _, ids in rows), rows
    after = store.load_entry(tmp_path / "new" / name).meta
    assert _sightings(after) == _sightings(before)


def test_a_hit_whose_program_reference_is_broken_is_said_not_skipped(tmp_path):
    # a hand merge left 5fcbc5cdc0's third hit pointing at itself ("program_of": 2)
    import json

    name = "miscompile-functionalization-c10211248b"
    old = committed_copy(ROOT / "corpus" / name, tmp_path / "old")
    meta = json.loads((old / "meta.json").read_text())
    meta["hits"][1] = {k: v for k, v in meta["hits"][1].items() if k != "program"}
    meta["hits"][1]["program_of"] = 1
    (old / "meta.json").write_text(json.dumps(meta))
    rows = list(rebuilt([str(old)], tmp_path / "new", budget=10))
    assert rows[1] == (f"{name} hit 1 (fx-reinplace)",
                       "dropped (no program: its program_of reference names no hit with one)", [])


@pytest.mark.parametrize("entry", entry_params(ENTRIES, UNTRACKED_ENTRIES))
def test_repository_corpus_entry_is_a_fixed_point_of_the_rebuild(entry, tmp_path):
    # the committed entry: sightings a local campaign added are not yet part of the suite
    rows = list(rebuilt([str(committed_copy(entry, tmp_path / "old"))], tmp_path / "rebuilt"))
    assert rows, entry
    here = [(s, said, ids) for s, said, ids in rows if _CANNOT_RUN_HERE not in said]
    if not here:
        pytest.skip(f"{entry.name}: this host cannot run its pipeline ({clip(rows[0][1], 160)})")
    stale = [(s, said) for s, said, ids in here if ids != [entry.name]]
    assert not stale, (
        f"{entry.name} is not what the current code writes: {stale}; rebuild the corpus "
        f"(python -m aliasfuzz.campaign.rebuild corpus/*/ --corpus NEW, README)")


def test_an_entry_this_host_cannot_run_is_kept_as_it_is(tmp_path):
    # fresh user 49's B3: the README's recipe dropped the GPU-found 3ec1525bd5 on a CPU host
    import torch

    name = "miscompile-reinplace-3ec1525bd5"
    if torch.cuda.is_available():
        pytest.skip("this host runs the entry's full Inductor compile")
    old = committed_copy(ROOT / "corpus" / name, tmp_path / "old")
    rows = list(rebuilt([str(old)], tmp_path / "new", budget=10))
    assert rows[0][2] == [name] and "kept as it is" in rows[0][1], rows
    for f in ("meta.json", "program.json", "repro.py"):
        assert (tmp_path / "new" / name / f).read_bytes() == (old / f).read_bytes()


def test_a_rebuild_refuses_bad_input_before_any_work(tmp_path, capsys):
    from aliasfuzz.campaign.rebuild import main

    good = committed_copy(ROOT / "corpus" / "miscompile-functionalization-c10211248b",
                          tmp_path / "old")
    bad = tmp_path / "old" / "miscompile-bad-0000000000"
    shutil.copytree(good, bad)
    (bad / "meta.json").write_text("{")
    assert main([str(tmp_path / "old"), "--corpus", str(tmp_path / "new")]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("aliasfuzz: error: ") and "meta.json" in err and "\n" not in err
    assert not (tmp_path / "new").exists()  # nothing rebuilt without the broken entry
    (tmp_path / "file").write_text("")
    assert main([str(good), "--corpus", str(tmp_path / "file")]) == 2
    assert main([str(good), "--corpus", str(tmp_path / "n2"), "--shrink-budget", "-5"]) == 2
    assert "must be 0 or more" in capsys.readouterr().err

"""Known-first (issue 16, :meth:`aliasfuzz.campaign.pool.Pool._known_first`): a finding that a
known bug's workaround removes, whose cut names only known bugs already in the corpus, is
recorded as found, one more sighting of that bug, without shrinking; anything short of that
is shrunk as before.

Campaign 34 shrank the crash of PyTorch #198095 (``corpus/crash-aot-runtime-4c99eb0bc2``,
a replay of an output view onto a synthetic base, gone with
``view_replay_for_aliased_outputs=False``) 29 times.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.corpus import load_entry
from aliasfuzz.campaign.known import KnownBug, known_first_candidates, load_known
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.campaign.pool import Pool

ROOT = Path(__file__).resolve().parents[2]
ENTRY = ROOT / "corpus" / "crash-aot-runtime-4c99eb0bc2"
CONTROL = (("functorch_config", {"view_replay_for_aliased_outputs": False}),)


def _bug(**kw) -> KnownBug:
    fields = {"issue": "pytorch/pytorch#1", "title": "t", "stage": "aot-runtime",
              "verdict": "crash", "evidence": ("view",), "control": CONTROL, **kw}
    return KnownBug(**fields)


def test_candidates_need_a_control_and_every_field_readable_before_the_cut():
    features = ["inplace", "view", "aliased-inputs"]
    ok = _bug()
    assert known_first_candidates([ok], "crash", "inductor", {"add_"}, features) == [ok]
    assert not known_first_candidates([_bug(control=())], "crash", "inductor", set(), features)
    assert not known_first_candidates([ok], "miscompile", "inductor", set(), features)
    assert not known_first_candidates([ok], "crash", "inductor", set(), ["inplace"])  # no view
    assert not known_first_candidates([_bug(ops=("unfold",))], "crash", "inductor", {"add_"},
                                      features)
    assert not known_first_candidates([_bug(pipelines=("aot_eager",))], "crash", "inductor",
                                      set(), features)
    # decisions are a reinplace root's evidence, a related row never makes a finding known
    assert not known_first_candidates([_bug(stage="reinplace")], "crash", "inductor", set(), features)
    assert not known_first_candidates([_bug(related=True)], "crash", "inductor", set(), features)
    # absent waits for the cut: an unshrunk program may keep what the shrunk one loses
    assert known_first_candidates([_bug(absent=("aliased",))], "crash", "inductor", set(),
                                  features)


@pytest.fixture(scope="module")
def finding():
    entry = load_entry(ENTRY)
    pipeline = entry.meta["expected"]["pipeline"]
    out = _judge.evaluate(entry.program, pipeline, "cpu")
    assert (out["verdict"], out["check"]) == ("crash", "exceptions"), out
    return entry.program, pipeline, out


def _shrink(tmp_path: Path, finding, filed: bool, **opts):
    corpus = tmp_path / "corpus"
    corpus.mkdir(parents=True)
    shutil.copy(ROOT / "corpus" / "known.toml", corpus)
    if filed:
        shutil.copytree(ENTRY, corpus / ENTRY.name)
    program, pipeline, out = finding
    options = CampaignOptions(programs=1, workers=1, corpus=str(corpus),
                              state=str(tmp_path / "st"), **opts)
    pool = Pool(options, tmp_path / "w", load_known(corpus))
    try:  # the pool's thread waits for jobs: its worker is this test's meanwhile
        return pool._shrink(pool.workers[0], 0, pipeline, program, out)[3]
    finally:
        pool.close()


def test_a_known_bugs_sighting_whose_entry_is_filed_is_blamed_as_found(tmp_path, finding):
    original, small, spent, blame, seconds, note = _shrink(tmp_path, finding, filed=True)
    assert small is original and spent == 0  # one control run, no shrink execution
    assert note == {"known_first": "pytorch/pytorch#198095"}
    assert blame["stages"] == ["aot-runtime"]
    assert blame["controls"] == {"pytorch/pytorch#198095": "ok"}
    assert seconds["known_first"] > 0 and seconds["shrink"] == 0


def test_it_is_shrunk_when_the_bug_has_no_entry_yet_or_known_first_is_off(tmp_path, finding):
    for name, filed, opts in (("new", False, {}), ("off", True, {"known_first": False})):
        original, small, spent, blame, seconds, note = _shrink(tmp_path / name, finding,
                                                               filed, **opts)
        assert "known_first" not in note and "known_first" not in seconds
        assert spent > 1 and seconds["shrink"] > 0


def test_the_console_and_the_report_count_the_findings_not_shrunk(tmp_path):
    from collections import Counter

    from aliasfuzz.campaign.cli import dismissed_notes
    from aliasfuzz.campaign.driver import CampaignResult
    from aliasfuzz.report.data import _finding_row

    res = CampaignResult(id="c", dir=tmp_path, options=CampaignOptions(programs=1),
                         known_first_by=Counter({"pytorch/pytorch#122773": 1,
                                                 "pytorch/pytorch#198095": 2}))
    notes = [n for n in dismissed_notes(res) if "not shrunk" in n]
    assert len(notes) == 1 and notes[0].startswith(
        "note: 3 findings recorded as a sighting of a known bug, not shrunk "
        "(pytorch/pytorch#198095 x2, pytorch/pytorch#122773 x1)"), notes
    assert not dismissed_notes(CampaignResult(id="c", dir=tmp_path,
                                              options=CampaignOptions(programs=1)))
    event = {"t": "finding", "i": 3, "pipeline": "aot_eager", "id": ENTRY.name,
             "ids": [ENTRY.name], "news": [False], "knowns": ["pytorch/pytorch#198095"],
             "known_first": "pytorch/pytorch#198095"}
    assert _finding_row(event, set())["known_first"] == "pytorch/pytorch#198095"


def test_a_repro_shows_a_shrunk_sighting_before_one_recorded_as_found():
    import json

    from aliasfuzz.campaign.repro import plan

    entry = load_entry(ENTRY)
    meta = json.loads(json.dumps(entry.meta))
    meta["expected"]["pipeline"], meta["full"] = "inductor-reinplace", "unsupported"  # a harness
    found = entry.program.to_json()
    found["body"] = found["body"] + found["body"][-1:]  # as found: one statement more
    sighting = {"pipeline": "aot_eager", "verdict": "crash", "check": "exceptions",
                "statements": {"original": 9, "minimized": 9}, "program": found}
    meta["hits"] = [{**sighting, "known_first": "pytorch/pytorch#198095"}]
    assert plan(entry.program, meta).pipeline == "inductor-reinplace"
    meta["hits"] = [sighting]  # shrunk, aot_eager is the more public way
    assert plan(entry.program, meta).pipeline == "aot_eager"


def test_the_sighting_is_recorded_as_found_in_the_known_entry(tmp_path):
    import json

    from aliasfuzz.campaign.corpus import record

    corpus = tmp_path / "corpus"
    shutil.copytree(ENTRY, corpus / ENTRY.name)
    entry = load_entry(ENTRY)
    blame = {"stage": "aot-runtime", "stages": ["aot-runtime"], "trail": [], "reason": "",
             "controls": {"pytorch/pytorch#198095": "ok"}}
    out = {"verdict": "crash", "check": "exceptions", "explanation": "RuntimeError: ..."}
    got = record(corpus, entry.program, entry.program, out, "aot_eager", blame,
                 load_known(ROOT / "corpus"),
                 {"campaign": "c", "seed": 1, "program_index": 7, "device": "cpu",
                  "shrink_executions": 1, "known_first": "pytorch/pytorch#198095"})
    assert [p.name for p in got.paths] == [ENTRY.name]  # one more hit, no new entry
    meta = json.loads((corpus / ENTRY.name / "meta.json").read_text())
    assert meta["hits"][-1]["known_first"] == "pytorch/pytorch#198095"
    assert meta["hits"][-1]["program_index"] == 7 and "known_first" not in meta

"""``aliasfuzz run --mutate SHARE`` (issue 15): the campaign runs the programs
:class:`aliasfuzz.campaign.sources.Programs` draws from the sources it saved at its start."""

from __future__ import annotations

import hashlib
import json

from aliasfuzz.campaign import sources
from aliasfuzz.campaign.options import CampaignOptions
from tests.common.cli import run_cli

#: the campaign's default --dynamic-share marks programs (meta "dynamic") that the hashes see
_DYNAMIC = CampaignOptions.dynamic_share


def _run(tmp, *extra):
    (tmp / "corpus").mkdir(parents=True, exist_ok=True)  # a named --corpus must exist
    return run_cli("run", "--programs", "6", "--seed", "5", "--pipelines", "debug-miscompile",
                   "--workers", "1", "--report", "none", "-q", "--no-shrink",
                   "--corpus", tmp / "corpus", "--state", tmp / "state", *extra,
                   env={"ALIASFUZZ_DEBUG_PIPELINES": "1"}, timeout=300)


def _hashes(state) -> dict[int, str]:
    (j,) = (state / "runs").glob("*/journal.jsonl")
    events = [json.loads(x) for x in j.read_text().splitlines() if x.endswith("}")]
    return {e["i"]: e["h"] for e in events if e.get("t") == "task"}


def test_a_mutating_campaign_runs_mutants_of_its_saved_sources(tmp_path):
    r = _run(tmp_path, "--mutate", "1")
    assert r.returncode in (0, 1), r.stderr
    (run,) = (tmp_path / "state" / "runs").glob("*")
    saved = sources.load(run)
    assert saved and any(i.startswith("seeds/") for i, _ in saved)
    progs = sources.Programs(5, 8, 1.0, saved, dynamic_share=_DYNAMIC)
    want = {i: hashlib.sha256(progs[i].dumps().encode()).hexdigest()[:16] for i in range(6)}
    assert _hashes(tmp_path / "state") == want
    mutants = [progs[i].meta.get("mutated_from") for i in range(6)]
    n = sum(m is not None for m in mutants)
    assert n >= 4
    # the count of mutants: in the headline and, per source, in the report's data
    (head,) = [x for x in r.stdout.splitlines() if x.startswith("campaign ")]
    assert f": 6 programs ({n} mutant{'s' * (n != 1)}), " in head, head
    from aliasfuzz.report.data import collect

    c = collect(run.name, state=tmp_path / "state", corpus=tmp_path / "corpus")["campaign"]
    assert c["mutants"] == n and sum(c["mutated_from"].values()) == n
    assert c["mutated_from"] == {s: mutants.count(s) for s in set(mutants) - {None}}


def test_mutation_is_the_default_and_off_with_mutate_0(tmp_path):
    """Issue 15: a third of a campaign's programs are mutants by default; ``--mutate 0``
    runs the generator's programs, the ones a campaign ran before mutation existed."""
    assert CampaignOptions().mutate == 0.33
    r = _run(tmp_path / "default")
    assert r.returncode in (0, 1), r.stderr
    (run,) = (tmp_path / "default" / "state" / "runs").glob("*")
    progs = sources.Programs(5, 8, 0.33, sources.load(run), dynamic_share=_DYNAMIC)
    n = sum("mutated_from" in progs[i].meta for i in range(6))
    assert 0 < n < 6 and f": 6 programs ({n} mutant{'s' * (n != 1)}), " in r.stdout, r.stdout
    assert _hashes(tmp_path / "default" / "state") == {
        i: hashlib.sha256(progs[i].dumps().encode()).hexdigest()[:16] for i in range(6)}
    r = _run(tmp_path / "off", "--mutate", "0")
    assert r.returncode in (0, 1), r.stderr
    (run,) = (tmp_path / "off" / "state" / "runs").glob("*")
    assert not (run / sources.FILE).exists()
    fresh = sources.Programs(5, 8, dynamic_share=_DYNAMIC)
    assert _hashes(tmp_path / "off" / "state") == {
        i: hashlib.sha256(fresh[i].dumps().encode()).hexdigest()[:16] for i in range(6)}
    assert ": 6 programs (0 mutants), " in r.stdout


def test_a_resumed_mutating_campaign_draws_from_the_sources_saved_at_its_start(tmp_path):
    r = _run(tmp_path, "--mutate", "0.5")
    assert r.returncode in (0, 1), r.stderr
    (run,) = (tmp_path / "state" / "runs").glob("*")
    saved = sources.load(run)
    # the corpus now holds findings the sources do not; the resume must not list them
    (tmp_path / "state" / "runs" / run.name / "journal.jsonl").write_text(
        "".join(x + "\n" for x in (run / "journal.jsonl").read_text().splitlines()
                if '"i": 4' not in x and '"i": 5' not in x and '"t": "end"' not in x))
    r = run_cli("run", "--resume", run, "--state", tmp_path / "state", "-q",
                env={"ALIASFUZZ_DEBUG_PIPELINES": "1"}, timeout=300)
    assert r.returncode in (0, 1), r.stderr
    assert sources.load(run) == saved
    progs = sources.Programs(5, 8, 0.5, saved, dynamic_share=_DYNAMIC)
    want = {i: hashlib.sha256(progs[i].dumps().encode()).hexdigest()[:16] for i in range(6)}
    assert _hashes(tmp_path / "state") == want


def test_a_bad_share_is_a_one_line_error_before_the_campaign(tmp_path):
    r = _run(tmp_path, "--mutate", "3")
    assert r.returncode == 2 and r.stderr.strip().splitlines() == [
        "aliasfuzz: error: --mutate must be a share between 0 and 1"], r.stderr
    assert not (tmp_path / "state" / "runs").exists()

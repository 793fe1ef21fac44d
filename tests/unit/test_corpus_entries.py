"""Which corpus entries the corpus tests check: committed ones, never a local campaign's new
finding (README quick start: ``aliasfuzz run`` then the tests, issue 12)."""

from __future__ import annotations

import subprocess

import pytest

from tests.common.corpus_entries import UNTRACKED, committed_entries, entry_params


def _entry(corpus, name):
    d = corpus / name
    d.mkdir(parents=True)
    (d / "meta.json").write_text("{}")
    (d / "program.json").write_text("{}")
    return d


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


def test_tracked_entries_are_tests_and_untracked_ones_are_skipped_with_the_reason(tmp_path):
    corpus = tmp_path / "corpus"
    old = _entry(corpus, "miscompile-x-0000000001")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "corpus")
    new = _entry(corpus, "crash-y-0000000002")  # what a local campaign writes afterwards
    (old / "repro.py").write_text("")  # a campaign re-rendering a committed entry's file
    assert committed_entries(corpus) == ([old], [new])
    params = entry_params(*committed_entries(corpus))
    assert [p.id for p in params] == [old.name, new.name]
    assert params[0].marks == ()
    [skip] = params[1].marks
    assert skip.kwargs["reason"] == UNTRACKED.format(name=new.name)
    assert "not tracked by git" in skip.kwargs["reason"]


def test_outside_git_every_entry_counts_as_committed(tmp_path):
    corpus = tmp_path / "corpus"
    a, b = _entry(corpus, "a-0000000001"), _entry(corpus, "b-0000000002")
    assert committed_entries(corpus) == ([a, b], [])


def test_the_repository_corpus_has_committed_entries():
    from tests.common.repro_cases import ROOT

    committed, _ = committed_entries(ROOT / "corpus")
    if not (ROOT / ".git").exists():
        pytest.skip("not a git checkout")
    assert len(committed) >= 10

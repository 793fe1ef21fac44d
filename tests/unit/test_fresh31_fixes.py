"""Fresh user 31's findings: an issue title made of Dynamo's hint (B9); a clone run with
another clone's venv, which runs that other clone's code on this corpus without a word (B2);
config errors that named neither file nor key (B4) or were not raised because a flag
replaced the value (B5); a verdict of the wrong type called missing (B6)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from aliasfuzz.campaign._repro_words import mismatch, title
from aliasfuzz.campaign.corpus import load_entry, other_checkout
from aliasfuzz.campaign.options import merge_options
from aliasfuzz.errors import InvalidArgument

ROOT = Path(__file__).resolve().parents[2]

HINT = ("Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace (please do this especially if "
        "you're reporting a bug to PyTorch). For even more developer context, set "
        'TORCH_LOGS="+dynamo"')


def test_an_exception_without_a_message_is_not_titled_by_dynamos_hint():
    said = f"compiled raises _Failed: compile: InductorError: AssertionError: {HINT}; eager does not"
    assert mismatch(said) == "InductorError: AssertionError (no message) (while compiling)"
    meta = {"expected": {"pipeline": "inductor", "verdict": "crash", "check": "exceptions"},
            "root": {"stage": "codegen:cpp-vectorized", "verdict": "crash"}, "explanation": said}
    assert "TORCHDYNAMO_VERBOSE" not in title(meta)
    # a message of its own is kept, hint or not
    said = f"compiled raises _Failed: run: RuntimeError: boom {HINT}; eager does not"
    assert mismatch(said) == "RuntimeError: boom (when run)"


def _checkout(root: Path, name: str = "aliasfuzz") -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(f'[project]\nname = "{name}"\nversion = "0"\n')
    return root


def test_a_note_names_both_checkouts_when_another_ones_code_runs(tmp_path):
    mine, other = _checkout(tmp_path / "b"), _checkout(tmp_path / "a")
    (mine / "corpus").mkdir()
    note = other_checkout(cwd=mine / "corpus", code=other)
    assert note is not None and note.startswith("note: ")
    assert str(mine) in note and str(other) in note
    assert other_checkout(cwd=mine, code=mine) is None  # its own code
    assert other_checkout(cwd=_checkout(tmp_path / "p", "proj"), code=other) is None  # no checkout
    assert other_checkout(cwd=tmp_path, code=other) is None


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return str(path)


def test_list_options_of_a_config_file_are_named_by_file_and_key(tmp_path):
    path = _config(tmp_path, "[run]\npipelines = 5\n")
    with pytest.raises(InvalidArgument) as e:
        merge_options({}, path)
    assert str(e.value) == (f"config file {path!r}: [run] pipelines must be a comma list or a "
                            "list of strings, not 5")
    with pytest.raises(InvalidArgument, match=r"^--pipelines must be a comma list"):
        merge_options({"pipelines": 5})  # a flag's own value, named as typed (fresh user 34)


def test_a_config_value_of_the_wrong_type_is_refused_though_a_flag_replaces_it(tmp_path):
    path = _config(tmp_path, "[run]\ncorpus = 5\nseed = 3\n")
    with pytest.raises(InvalidArgument) as e:
        merge_options({"corpus": str(tmp_path)}, path)
    assert str(e.value) == f"config file {path!r}: [run] corpus must be a path, not 5"
    assert merge_options({"seed": 4}, _config(tmp_path, "[run]\nseed = 3\n")).seed == 4


def test_a_verdict_of_the_wrong_type_is_not_called_missing(tmp_path):
    entry = tmp_path / "miscompile-decomposition-a649b9362b"
    shutil.copytree(ROOT / "corpus" / entry.name, entry)
    meta = json.loads((entry / "meta.json").read_text())
    meta["expected"]["verdict"] = 5
    (entry / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InvalidArgument, match=r"expected\.verdict must be a string, not 5$"):
        load_entry(entry)
    del meta["expected"]["verdict"]
    (entry / "meta.json").write_text(json.dumps(meta))
    with pytest.raises(InvalidArgument, match=r"expected\.verdict missing$"):
        load_entry(entry)


def test_a_meta_that_is_not_an_object_is_said_so(tmp_path):
    # fresh user 32's B6: a JSON list was reported as "no 'expected' verdict"
    entry = tmp_path / "miscompile-decomposition-a649b9362b"
    shutil.copytree(ROOT / "corpus" / entry.name, entry)
    (entry / "meta.json").write_text("[1, 2]")
    with pytest.raises(InvalidArgument, match=r"meta\.json: must be a JSON object, not list \[1, 2\]$"):
        load_entry(entry)

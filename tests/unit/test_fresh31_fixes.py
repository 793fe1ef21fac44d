"""Fresh user 31's findings: an issue title made of Dynamo's hint (B9), and a clone run with
another clone's venv, which runs that other clone's code on this corpus without a word (B2)."""

from __future__ import annotations

from pathlib import Path

from aliasfuzz.campaign._repro_words import mismatch, title
from aliasfuzz.campaign.corpus import other_checkout

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

"""Fresh user 47's B10: texts cut where they stood. A title ending on the bare ``(`` of an
Inductor IR dump (``make_reindexer NYI on DtypeView(``), the side-by-side cells of a crash
(``'_Failed: compile: InductorError: NotI``) and the report's reason cells
(``... a crash of inductor, wh``)."""

from __future__ import annotations

from aliasfuzz.errors import one_line
from aliasfuzz.report.data import _undecided_reason, refusal_reason, rejection_reason
from oracle.printers import _columns, _fmt

DUMP = "make_reindexer NYI on DtypeView(\n  TensorBox(StorageBox(\n    ComputedBuffer(name='buf0'"


def test_a_first_line_that_opens_a_dump_is_closed_with_an_ellipsis():
    assert one_line(NotImplementedError(DUMP)) == (
        "NotImplementedError: make_reindexer NYI on DtypeView(...)")
    # brackets closed on their own line, or a message of one line, stay as they are
    assert one_line(RuntimeError("shape '[5]' is (invalid)\nmore")) == (
        "RuntimeError: shape '[5]' is (invalid)")
    assert one_line(RuntimeError("a [b")) == "RuntimeError: a [b"
    # the introducing line joined with the next, whose bracket the rest closes
    assert one_line(RuntimeError("raised:\nf(x,\ny)")) == "RuntimeError: raised: f(x,...)"


def test_a_limit_cuts_at_a_word():
    said = one_line(RuntimeError("out of bounds for storage of size 144 elements"), 30)
    assert said == "RuntimeError: out of bounds for storage..."


def test_a_long_error_text_wraps_in_its_column():
    text = "_Failed: compile: InductorError: NotImplementedError: make_reindexer NYI on DtypeView(...)"
    rows = _columns(_fmt(None), _fmt(text))
    right = " ".join(r.split(" | ")[1].strip() for r in rows)
    assert right == text, rows
    assert all(len(r.split(" | ")[1]) <= 38 for r in rows)
    # a text of more than six lines: five, then the rest clipped at a word
    rows = _fmt(" ".join(["word"] * 100))
    assert len(rows) == 6 and rows[-1].endswith("...") and not rows[-1].endswith("wo...")


def test_report_reason_cells_end_at_a_word():
    long = "a crash of inductor, which " + "the fast path does not show " * 10
    for said in (_undecided_reason({"explanation": long}),
                 refusal_reason({"explanation": long}),
                 rejection_reason({"check": "c", "explanation": long})):
        assert said.endswith("..."), said
        assert said[:-3].split()[-1] in long.split(), said


def test_an_out_of_bounds_title_says_out_of_bounds_once():
    from pathlib import Path

    from aliasfuzz.campaign import corpus as store
    from aliasfuzz.campaign._repro_words import title

    root = Path(__file__).resolve().parents[2]
    said = title(store.load_entry(root / "corpus" / "crash-lowering-5fcbc5cdc0").meta)
    assert said.count("out of bounds") == 1, said
    assert "): Inductor's wrapper made reinterpret_tensor(buf, (2, 1), (3, 1), 11)" in said, said

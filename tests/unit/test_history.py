"""The SQLite campaign history: one row per campaign, replaced as a whole."""

from __future__ import annotations

from aliasfuzz.campaign.history import History


def _row(cid: str, started: float, programs: int) -> dict:
    return {
        "id": cid,
        "started": started,
        "finished": started + 10,
        "seed": 1,
        "device": "cpu",
        "pipelines": "inductor,aot_eager",
        "budget": "10 s",
        "programs": programs,
        "tasks": 2 * programs,
        "seconds": 10.0,
        "throughput": programs / 10.0,
        "status": "done",
        "versions": {"torch": "2.13"},
    }


def test_record_and_read_back(tmp_path):
    h = History(tmp_path / "h.sqlite")
    h.record(
        _row("b", 200.0, 5),
        {("inductor", "ok"): 4, ("inductor", "miscompile"): 1},
        [
            {
                "id": "f1",
                "pipeline": "inductor",
                "verdict": "miscompile",
                "check": "values",
                "new": True,
            }
        ],
    )
    h.record(_row("a", 100.0, 3), {("aot_eager", "ok"): 3}, [])
    rows = h.campaigns()
    assert [r["id"] for r in rows] == ["a", "b"]  # oldest first
    b = rows[1]
    assert b["versions"] == {"torch": "2.13"} and b["throughput"] == 0.5
    assert sorted((v["pipeline"], v["verdict"], v["n"]) for v in b["verdicts"]) == [
        ("inductor", "miscompile", 1),
        ("inductor", "ok", 4),
    ]
    assert b["findings"] == [
        {
            "finding": "f1",
            "pipeline": "inductor",
            "verdict": "miscompile",
            "check_name": "values",
            "new": 1,
        }
    ]


def test_recording_again_replaces_the_campaign(tmp_path):
    h = History(tmp_path / "h.sqlite")
    h.record(_row("a", 1.0, 3), {("inductor", "ok"): 3}, [])
    h.record(dict(_row("a", 1.0, 7), status="interrupted"), {("inductor", "ok"): 7}, [])
    rows = History(tmp_path / "h.sqlite").campaigns()  # a second connection sees it
    assert len(rows) == 1 and rows[0]["programs"] == 7 and rows[0]["status"] == "interrupted"
    assert rows[0]["verdicts"] == [{"pipeline": "inductor", "verdict": "ok", "n": 7}]
    assert h.campaign("a")["programs"] == 7 and h.campaign("zz") is None


def test_journal_drops_a_torn_last_line_before_appending(tmp_path):
    from aliasfuzz.campaign.journal import Journal

    path = tmp_path / "journal.jsonl"
    j = Journal(path)
    j.append({"t": "task", "i": 0})
    j.close()
    with open(path, "a") as f:
        f.write('{"t": "task", "i": 1, "outc')  # kill -9 in the middle of a write
    assert Journal.events(path) == [{"t": "task", "i": 0}]
    j = Journal(path)  # resume
    j.append({"t": "task", "i": 1})
    j.close()
    assert Journal.events(path) == [{"t": "task", "i": 0}, {"t": "task", "i": 1}]


def test_rejection_reasons_are_countable():
    from aliasfuzz.report.data import rejection_reason

    a = rejection_reason({"check": "unsupported", "explanation": "fx-reinplace: functionalize "
                          "does not support custom ops with mutable (aliasing) arguments (RuntimeError)"})
    assert a == ("unsupported: fx-reinplace: functionalize does not support custom ops with "
                 "mutable (aliasing) arguments")
    # statement numbers and exception messages do not split one reason into many
    b1 = rejection_reason({"check": "eager", "explanation": "eager raises RuntimeError: size 3"})
    b2 = rejection_reason({"check": "eager", "explanation": "eager raises RuntimeError: size 4"})
    assert b1 == b2 == "eager: eager raises RuntimeError"
    c1 = rejection_reason({"check": "torchscript", "explanation": "unscriptable: statement 1: tk.x"})
    c2 = rejection_reason({"check": "torchscript", "explanation": "unscriptable: statement 7: tk.x"})
    assert c1 == c2


def test_internal_errors_column_and_a_history_written_before_it(tmp_path):
    import sqlite3

    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as db:  # the schema before the internal_errors column
        db.execute(
            "CREATE TABLE campaigns (id TEXT PRIMARY KEY, started REAL, finished REAL, "
            "seed INTEGER, device TEXT, pipelines TEXT, budget TEXT, programs INTEGER, "
            "tasks INTEGER, seconds REAL, throughput REAL, status TEXT, versions TEXT)"
        )
        db.execute(
            "INSERT INTO campaigns VALUES ('old', 1.0, 2.0, 0, 'cpu', 'inductor', '1 s', "
            "1, 1, 1.0, 1.0, 'done', '{}')"
        )
    h = History(path)
    h.record({**_row("new", 300.0, 2), "internal_errors": 3}, {}, [])
    got = {c["id"]: c["internal_errors"] for c in h.campaigns()}
    assert got == {"old": 0, "new": 3}


def test_new_in_history_is_new_as_the_console_counts_it(tmp_path):
    # fresh user 30: Trends said "new 14" where the console said 6 new, 8 known upstream
    h = History(tmp_path / "h.sqlite")
    head = {"pipeline": "inductor", "verdict": "miscompile", "check": "values"}
    h.record(_row("a", 1.0, 3), {}, [
        {**head, "id": "new-one", "ids": ["new-one"], "news": [True], "knowns": [None], "new": True},
        {**head, "id": "known-one", "ids": ["known-one"], "news": [True],
         "knowns": ["pytorch/pytorch#1"], "new": True},
        {**head, "id": "old-one", "ids": ["old-one"], "news": [False], "knowns": [None], "new": False},
    ])
    (row,) = h.campaigns()
    assert {f["finding"]: f["new"] for f in row["findings"]} == {
        "new-one": 1, "known-one": 0, "old-one": 0}

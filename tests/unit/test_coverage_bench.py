"""``bench/coverage.py``'s arithmetic against a hand count, and its flags."""

from __future__ import annotations

from collections import Counter

import pytest

from aliasfuzz.fuzz.ir import Op, Program
from bench.coverage import flags, tabulate


def _prog(*ops: str) -> Program:
    return Program((), (), tuple(Op(o, ["x"], {}, (f"v{i}",)) for i, o in enumerate(ops)), ())


# Four programs: add is in 3 (2 valid), neg in 2 (1 valid), clone in 1 (invalid).
PROGS = [_prog("add", "neg"), _prog("add", "add"), _prog("add", "clone"), _prog("neg")]
VALID = [True, True, False, False]
FAM = {"add": "A", "neg": "A", "clone": "B"}.get


def test_op_and_family_shares_match_a_hand_count():
    fams, ops = tabulate(PROGS, VALID, family=lambda o: FAM(o, "other"))
    by = {r.name: r for r in ops}
    assert (by["add"].programs, by["add"].valid, by["add"].total) == (3, 2, 4)
    assert by["add"].share == 0.75 and by["add"].validity == pytest.approx(2 / 3)
    assert (by["neg"].programs, by["neg"].valid) == (2, 1)
    assert (by["clone"].programs, by["clone"].valid) == (1, 0)
    assert by["sin"].programs == 0 and by["sin"].validity == 0.0
    fam = {r.name: r for r in fams}
    # family A is in all four programs, valid in programs 0 and 1; B only in the invalid one
    assert (fam["A"].programs, fam["A"].valid) == (4, 2)
    assert (fam["B"].programs, fam["B"].valid) == (1, 0)


def test_accepted_share_counts_every_try_of_the_op():
    acc = Counter({"add": 3, "neg": 1})
    rej = Counter({("add", "InvalidArgument"): 1, ("neg", "no-arguments"): 3, ("add", "x"): 2})
    fams, ops = tabulate(PROGS, VALID, acc, rej, family=lambda o: FAM(o, "other"))
    by = {r.name: r for r in ops}
    assert (by["add"].accepted, by["add"].tried) == (3, 6)
    assert (by["neg"].accepted, by["neg"].tried) == (1, 4)
    assert next(r for r in fams if r.name == "A").tried == 10


def test_flags_name_families_under_two_percent_and_ops_under_ninety_percent_valid():
    # 60 programs: "clone" in one (1.7 %), valid; "neg" in 10, 8 valid (80 %)
    progs = [_prog("add")] * 49 + [_prog("neg")] * 10 + [_prog("clone")]
    valid = [True] * 49 + [True] * 8 + [False] * 2 + [True]
    fams, ops = tabulate(progs, valid, family=lambda o: FAM(o, "other"))
    got = {(name, what.split(" (")[0]) for name, what, _ in flags(fams, ops)}
    assert ("B", "in 1.67 % of programs") in got
    assert ("neg", "80.0 % valid") in got
    assert not any(name in ("add", "A") for name, _ in got)


def test_lengths_must_agree():
    with pytest.raises(ValueError):
        tabulate(PROGS, VALID[:2])

"""fuzz/_gentry.first_fit: the try loop of the families drawn on streams of their own."""

import random

import pytest

from aliasfuzz.errors import GenerationFailure
from aliasfuzz.fuzz import _gentry
from aliasfuzz.fuzz.ir import Op, Program
from aliasfuzz.fuzz.sample import RandomDraw, generate
from aliasfuzz.fuzz.strategies import GenStats


@pytest.fixture
def base() -> Program:
    return generate(1, seed=3)[0]


def _append_clone(draw, program: Program, row: str) -> Program:
    src = program.outputs[0]
    name = _gentry.fresh_name("v", _gentry.taken_names(program))
    return Program(program.storages, program.inputs, (*program.body, Op(row, (src,), {}, (name,))),
                   (*program.outputs, name), dict(program.meta))


def test_first_fit_keeps_the_first_valid_try_and_records_its_row(base):
    stats = GenStats()
    out = _gentry.first_fit(base, RandomDraw(random.Random(0)), ["clone"], _append_clone, "k", stats)
    assert out.meta["k"] == "clone" and out.body[-1].op == "clone"
    assert stats.accepted["clone"] == 1 and not stats.rejected


def test_first_fit_counts_each_refused_try_by_rule_and_gives_the_program_back(base):
    stats = GenStats()

    def refuse(out, row):
        raise GenerationFailure("never")

    out = _gentry.first_fit(base, RandomDraw(random.Random(0)), ["clone"], _append_clone, "k",
                            stats, refuse)
    assert out is base
    assert stats.rejected["clone", "GenerationFailure"] == _gentry.ATTEMPTS
    assert not stats.accepted


def test_first_fit_validates_with_infer(base):
    stats = GenStats()
    out = _gentry.first_fit(base, RandomDraw(random.Random(0)), ["no_such_row"], _append_clone,
                            "k", stats)
    assert out is base and sum(stats.rejected.values()) == _gentry.ATTEMPTS


def test_fresh_name_skips_taken_names_and_takes_the_name():
    taken = {"v0", "v1", "v3"}
    assert _gentry.fresh_name("v", taken) == "v2"
    assert _gentry.fresh_name("v", taken) == "v4"

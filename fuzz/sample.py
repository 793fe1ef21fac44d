"""Deterministic program sampling: the same seed and versions give the same programs.

:func:`generate` runs the generator core of :mod:`aliasfuzz.fuzz.strategies` on a
``random.Random`` stream per program, seeded from ``(seed, index)``. Program ``i`` of a
seed therefore depends on nothing else: not on ``n``, on the programs before it, on
``PYTHONHASHSEED``, or on what the process imported. Four decisions taken after the draw
have streams of their own, seeded from ``(seed, index)`` too: the advanced-indexing
statement (:func:`aliasfuzz.fuzz._genadvindex.add_advindex`), the own-stream metadata
statement (``resize_``, ``set_``, ``requires_grad_``: :func:`aliasfuzz.fuzz._genmeta.add_metadata`),
the optional input with its ``None``-accepting statement
(:func:`aliasfuzz.fuzz._genoptional.add_optional`) and the ``requires_grad`` leaves
(:func:`aliasfuzz.fuzz.grads.mark_grad_leaves`), and, after the marking, the autograd
statement (:func:`aliasfuzz.fuzz._genautograd.add_autograd`), so that none changes the ops
drawn for the programs it leaves alone. (Hypothesis's own engine is not used
here on purpose: it mixes constants collected from the imported local modules into its
draws, so its output depends on the process's import history.) The distributions are
those of the Hypothesis strategy, without shrinking; to shrink a sampled program, replay
its failure under :func:`aliasfuzz.fuzz.strategies.programs`.
"""

from __future__ import annotations

import random
from typing import Any

from aliasfuzz.errors import GenerationFailure, InvalidArgument
from aliasfuzz.fuzz._genadvindex import add_advindex
from aliasfuzz.fuzz._genautograd import add_autograd
from aliasfuzz.fuzz._genmeta import add_metadata
from aliasfuzz.fuzz._genoptional import add_optional
from aliasfuzz.fuzz.grads import mark_grad_leaves
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.strategies import DrawBase, GenStats, build_program, make_config

__all__ = ["RandomDraw", "generate", "generate_one", "sample_programs"]


class RandomDraw(DrawBase):
    """:class:`~aliasfuzz.fuzz.ops.core.Draw` over a ``random.Random``: uniform choices."""

    def __init__(self, rng: random.Random) -> None:
        self._rng = rng

    def integer(self, lo: int, hi: int) -> int:
        if lo > hi:
            raise GenerationFailure(f"empty integer range [{lo}, {hi}]")
        return self._rng.randint(lo, hi)

    def boolean(self, p: float = 0.5) -> bool:
        return self._rng.random() < p

    def _pick(self, options: list[Any]) -> Any:
        return options[self._rng.randrange(len(options))]


def _check_int(name: str, v: Any, lo: int) -> int:
    if not isinstance(v, int) or isinstance(v, bool) or v < lo:
        raise InvalidArgument(f"{name} must be an integer >= {lo}, got {v!r}")
    return v


def generate_one(seed: int, index: int, *, stats: GenStats | None = None, **opts) -> Program:
    """Program ``index`` of ``seed`` (what ``generate(n, seed)[index]`` returns).

    Options are those of :func:`aliasfuzz.fuzz.strategies.programs`; a bad one raises
    :class:`InvalidArgument`. ``meta`` records ``seed`` and ``index``.
    """
    _check_int("seed", seed, 0)
    _check_int("index", index, 0)
    return _one(make_config(**opts), seed, index, stats)


def _one(cfg, seed: int, index: int, stats: GenStats | None) -> Program:
    # str seeds go through sha512 in random.seed: stable across processes and platforms.
    rng = random.Random(f"aliasfuzz:{seed}:{index}")
    p = build_program(RandomDraw(rng), cfg, stats)
    # advanced indexing with index tensors from the program has its own stream, so that
    # adding it changed no other program of a seed (tests pin programs by (seed, index))
    adv = random.Random(f"aliasfuzz-advindex:{seed}:{index}")
    p = add_advindex(p, RandomDraw(adv), cfg, stats)
    # so have resize_, set_ and requires_grad_ (fuzz/_genmeta.py), for the same reason
    meta = random.Random(f"aliasfuzz-metadata:{seed}:{index}")
    p = add_metadata(p, RandomDraw(meta), cfg, stats)
    # an optional input read by a None-accepting statement: its own stream too
    opt = random.Random(f"aliasfuzz-optional:{seed}:{index}")
    p = add_optional(p, RandomDraw(opt), cfg, stats)
    p = Program(
        p.storages, p.inputs, p.body, p.outputs, {**p.meta, "seed": seed, "index": index}
    )
    # decided after the draw, with its own stream: the ops and inputs of (seed, index) are
    # the same whatever the share (a new draw inside build_program would change them all)
    p = mark_grad_leaves(p, cfg.grad_share, seed, index)
    # autograd statements need the marking first; their own stream again
    ag = random.Random(f"aliasfuzz-autograd:{seed}:{index}")
    return add_autograd(p, RandomDraw(ag), cfg, stats)


def generate(n: int, seed: int = 0, *, stats: GenStats | None = None, **opts) -> list[Program]:
    """``n`` programs for ``seed``, deterministically (for the campaign driver and benches).

    Options are those of :func:`aliasfuzz.fuzz.strategies.programs` (``max_statements``,
    ``families``, ``dtypes``, ...), checked once; a bad one raises :class:`InvalidArgument`.
    ``stats`` collects per-op acceptance counts.
    """
    _check_int("n", n, 0)
    _check_int("seed", seed, 0)
    cfg = make_config(**opts)
    return [_one(cfg, seed, i, stats) for i in range(n)]


def sample_programs(n: int, seed: int = 0, **opts) -> list[str]:
    """``n`` programs for ``seed`` as Python source (``aliasfuzz sample``).

    Each text is the rendered module (:func:`~aliasfuzz.fuzz.render.render_module`)
    followed by ``make_inputs()``, which builds the inputs with their exact layouts.
    """
    from aliasfuzz.fuzz.render import render_inputs, render_module

    return [render_module(p).source + "\n\n" + render_inputs(p) for p in generate(n, seed, **opts)]

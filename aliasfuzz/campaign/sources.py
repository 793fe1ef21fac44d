"""The programs a campaign mutates (``--mutate``, issue 15) and program ``i`` of a campaign
(which of them compile with dynamic shapes, ``--dynamic-share``: :func:`mark_dynamic`).

The sources are the minimized programs of the corpus's entries (``<entry>/program.json``)
and the IR twins of the public bug reports (``seeds/*.json`` of the corpus, and the
repository's ``corpus/seeds`` when the corpus is elsewhere), in name order. They are
listed once, when a campaign starts, and saved in its folder (``mutation-sources.jsonl``:
one ``{"id", "program"}`` per line), so that a resumed campaign draws the same programs
although findings were added to the corpus meanwhile. A source that does not load or
validate (:meth:`~aliasfuzz.fuzz.ir.Program.validate`) is left out, as the corpus's other
readers leave out an unreadable entry.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Program

__all__ = ["FILE", "Programs", "collect", "is_dynamic", "load", "mark_dynamic", "save"]

#: The campaign folder's list of sources.
FILE = "mutation-sources.jsonl"

#: The repository's seeds (an editable install or a checkout; absent from a wheel).
_REPO_SEEDS = Path(__file__).resolve().parents[2] / "corpus" / "seeds"


def _program(path: Path) -> Program | None:
    try:
        p = Program.loads(path.read_text())
        p.validate()
    except (OSError, ValueError, InvalidArgument):  # ValueError: bad JSON or UTF-8
        return None
    return p


def collect(corpus: str | Path) -> list[tuple[str, Program]]:
    """``(id, program)`` of every valid source for a campaign writing to ``corpus``: the
    entries' programs (id: the folder name), then the seeds (id: ``seeds/<file stem>``)."""
    from aliasfuzz.campaign.corpus import list_entries

    out: list[tuple[str, Program]] = []
    for entry in list_entries(corpus):
        p = _program(entry / "program.json")
        if p is not None:
            out.append((entry.name, p))
    seeds = {f.stem: f for d in (_REPO_SEEDS, Path(corpus) / "seeds") if d.is_dir()
             for f in sorted(d.glob("*.json"))}  # the corpus's own copy wins
    for stem in sorted(seeds):
        p = _program(seeds[stem])
        if p is not None:
            out.append((f"seeds/{stem}", p))
    return out


def save(run_dir: Path, sources: list[tuple[str, Program]]) -> None:
    """Write ``sources`` to ``run_dir``'s :data:`FILE`."""
    lines = [json.dumps({"id": i, "program": p.to_json()}) for i, p in sources]
    (run_dir / FILE).write_text("".join(line + "\n" for line in lines))


def load(run_dir: Path) -> list[tuple[str, Program]]:
    """The sources saved in ``run_dir`` (none when the campaign mutates nothing)."""
    path = run_dir / FILE
    if not path.exists():
        return []
    out = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        try:
            d = json.loads(line)
            out.append((str(d["id"]), Program.from_json(d["program"])))
        except (ValueError, KeyError, TypeError, InvalidArgument) as e:
            raise InvalidArgument(f"{path}:{n}: not a mutation source ({e})") from None
    return out


def is_dynamic(share: float, seed: int, index: int) -> bool:
    """Whether program ``index`` of ``seed`` is one of a campaign's ``--dynamic-share``
    ``share`` (compiled with ``torch.compile(dynamic=True)``); drawn from a
    ``random.Random`` of its own seeded from ``(seed, index)``, so nothing else about the
    program depends on it."""
    return share > 0 and random.Random(f"aliasfuzz-dynamic:{seed}:{index}").random() < share


def mark_dynamic(program: Program, share: float, seed: int, index: int) -> Program:
    """``program`` with ``meta["dynamic"] = True`` for a ``share`` of ``(seed, index)``
    pairs, else ``program`` itself, unchanged. The choice uses its own ``random.Random``
    seeded from ``(seed, index)`` (as :func:`aliasfuzz.fuzz.grads.mark_grad_leaves`'s), so
    program ``i``'s ops, inputs and gradient marking are the same whatever ``share`` is.
    A marked program compiles with ``torch.compile(dynamic=True)`` on every
    ``torch.compile`` pipeline (:func:`aliasfuzz.campaign.options.task_options`)."""
    if not is_dynamic(share, seed, index):
        return program
    return Program(program.storages, program.inputs, program.body, program.outputs,
                   {**program.meta, "dynamic": True})


class Programs:
    """Program ``i`` of a campaign: with probability ``mutate`` (drawn from the seed and
    ``i`` alone) a mutant of one of ``sources`` (:func:`aliasfuzz.fuzz.mutate.mutate`),
    else, or when no mutant validates, program ``i`` of the generator
    (:func:`aliasfuzz.fuzz.sample.generate_one`). A mutant's ``meta`` says ``generator:
    mutation``, the operator (``mutation``) and the source's id (``mutated_from``). Either
    is marked dynamic for a ``dynamic_share`` of indices (:func:`mark_dynamic`)."""

    def __init__(self, seed: int, max_statements: int, mutate: float = 0.0,
                 sources: list[tuple[str, Program]] | None = None,
                 grad_share: float | None = None, dynamic_share: float = 0.0):
        self.seed, self.max_statements = seed, max_statements
        self.mutate, self.sources = mutate, list(sources or [])
        self.grad_share, self.dynamic_share = grad_share, dynamic_share

    def __getitem__(self, i: int) -> Program:
        return mark_dynamic(self._program(i), self.dynamic_share, self.seed, i)

    def _program(self, i: int) -> Program:
        from aliasfuzz.campaign import _judge

        if self.mutate > 0 and self.sources:
            rng = random.Random(f"aliasfuzz-mutate:{self.seed}:{i}")
            if rng.random() < self.mutate:
                m = self._mutant(i, rng)
                if m is not None:
                    return m
        return _judge.generate(self.seed, i, self.max_statements, self.grad_share)

    def _mutant(self, i: int, rng: random.Random) -> Program | None:
        from aliasfuzz.fuzz.mutate import mutate

        sid, source = self.sources[rng.randrange(len(self.sources))]
        m = mutate(source, rng)
        if m is None:
            return None
        meta: dict[str, Any] = {"generator": "mutation", "device": "cpu", "seed": self.seed,
                                "index": i, "mutation": m.meta["mutation"], "mutated_from": sid}
        return Program(m.storages, m.inputs, m.body, m.outputs, meta)

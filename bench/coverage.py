"""Coverage bench: which op families and ops the default generator reaches, and how valid.

Generates N programs (default 2,000) of the default generator with a fixed seed through the
deterministic sampler (:func:`aliasfuzz.fuzz.sample.generate`), checks each with validation
(:func:`aliasfuzz.fuzz.validate.infer`) and runs it eagerly on fresh inputs
(:func:`aliasfuzz.fuzz.eager.run_eager`). A program is *valid* when both pass (for a
program with a toggleable optional input, in both its forms:
:func:`aliasfuzz.fuzz.optional.toggled`). For each
family (the registry module a row lives in: :data:`FAMILY_NAMES`) and each op it prints:

* ``programs``: the share of all programs that contain it (at least one statement);
* ``valid``: the share of those programs that are valid;
* ``accepted``: the generator's accepted statement tries over all its tries of the op
  (validation refuses a try, the generator redraws; informative, not a target).

Families in under 2 % of programs and ops under 90 % validity are flagged, each with the
written reason from :data:`REASONS` (or ``no reason written``: a gap to fix). The table is
printed with rich and written as plain text to ``--write`` (default
``bench/runs/coverage-<today>.txt``).

    python bench/coverage.py [--n 2000] [--seed 0] [--write PATH | --write -]

Prints numbers; asserts nothing.
"""

from __future__ import annotations

import argparse
import datetime
import io
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from rich.console import Console
from rich.table import Table

from aliasfuzz.fuzz.ir import Program
from aliasfuzz.fuzz.ops import REGISTRY

#: Registry module (``OpDef.apply.__module__``'s last part) -> family name in the table.
FAMILY_NAMES: dict[str, str] = {
    "views": "views",
    "metadata": "metadata-mutating in-place",
    "functional": "functional",
    "inplace": "in-place",
    "_advindex": "in-place (advanced indexing)",
    "outs": "out= and functional scatters",
    "indexfam": "index family",
    "multiout": "multi-output out=",
    "custom": "custom ops",
    "factory": "factories",
    "kernels": "user Triton kernels",
    "kernel_probes": "Triton probes",
    "control": "control flow",
    "windows": "windowed and raw-strided views",
    "fallbacks": "in-place without Inductor lowering",
    "foreach": "foreach list-list",
    "outs2": "out= beyond add/mul",
    "optional": "TorchScript profiling seams (Optional inputs)",
    "autograd": "autograd",
}

#: Rows whose registry module is not their family: ``max(dim, out=(v, i))`` and
#: ``sort(out=(v, i))`` write two ``out=`` tensors, as issue 15's "multi-output out="
#: names them, though they live with the single-output rows of ``outs2``.
OP_FAMILIES: dict[str, str] = {
    "max.dim_max": "multi-output out=",
    "sort.values_stable": "multi-output out=",
}

#: Why a family or op stays under its target (family: < 2 % of programs; op: < 90 % valid).
#: Keys are family names or op names.
REASONS: dict[str, str] = {
    "control flow": "not in the default families (control flow breaks the Dynamo graph; "
    "drawn with --families control)",
    "Triton probes": "probe kernels for the kernel-analysis tests; no generator",
    "factories": "factories read nothing: drawn only as the functional family's rare choice",
}

PROGRAM_TARGET = 0.02
VALID_TARGET = 0.90


def family_of(op: str) -> str:
    """The family of registry row ``op`` (:data:`OP_FAMILIES`, else :data:`FAMILY_NAMES` of
    its module; the module name if unlisted)."""
    if op in OP_FAMILIES:
        return OP_FAMILIES[op]
    mod = REGISTRY[op].apply.__module__.rsplit(".", 1)[-1]
    return FAMILY_NAMES.get(mod, mod)


@dataclass(frozen=True)
class Row:
    """One line of the table: ``programs`` containing it (of ``total``), ``valid`` of those,
    and the generator's ``accepted`` / ``tried`` statement tries (0 / 0 for a family)."""

    name: str
    family: str
    programs: int
    valid: int
    total: int
    accepted: int = 0
    tried: int = 0

    @property
    def share(self) -> float:
        return self.programs / self.total if self.total else 0.0

    @property
    def validity(self) -> float:
        return self.valid / self.programs if self.programs else 0.0


def tabulate(
    progs: Sequence[Program],
    valid: Sequence[bool],
    accepted: Counter | None = None,
    rejected: Counter | None = None,
    family: Callable[[str], str] = family_of,
) -> tuple[list[Row], list[Row]]:
    """(family rows, op rows) over ``progs`` with ``valid[i]`` the validity of ``progs[i]``.

    Every registry row appears (with 0 programs when never drawn); ``accepted`` counts
    accepted tries per op and ``rejected`` rejected tries per ``(op, reason)``
    (:class:`~aliasfuzz.fuzz.strategies.GenStats`). Raises ValueError when the lengths differ.
    """
    if len(progs) != len(valid):
        raise ValueError(f"{len(progs)} programs but {len(valid)} validity flags")
    accepted = accepted or Counter()
    tries = Counter(accepted)
    for (op, _), c in (rejected or Counter()).items():
        tries[op] += c
    n = len(progs)
    in_ops: Counter = Counter()
    ok_ops: Counter = Counter()
    in_fam: Counter = Counter()
    ok_fam: Counter = Counter()
    for p, v in zip(progs, valid, strict=True):
        ops = {op.op for op in p.body}
        fams = {family(o) for o in ops}
        in_ops.update(ops)
        in_fam.update(fams)
        if v:
            ok_ops.update(ops)
            ok_fam.update(fams)
    op_rows = [Row(o, family(o), in_ops[o], ok_ops[o], n, accepted[o], tries[o]) for o in REGISTRY]
    fam_names = list(dict.fromkeys(r.family for r in op_rows))
    fam_rows = [Row(f, f, in_fam[f], ok_fam[f], n,
                    sum(r.accepted for r in op_rows if r.family == f),
                    sum(r.tried for r in op_rows if r.family == f)) for f in fam_names]
    return fam_rows, op_rows


def flags(fam_rows: Sequence[Row], op_rows: Sequence[Row]) -> list[tuple[str, str, str]]:
    """``(name, what is under target, reason)`` for families under :data:`PROGRAM_TARGET`
    of programs and ops (in at least one program) under :data:`VALID_TARGET` validity."""
    out = []
    for r in fam_rows:
        if r.share < PROGRAM_TARGET:
            out.append((r.name, f"in {100 * r.share:.2f} % of programs (< 2 %)",
                        REASONS.get(r.name, "no reason written")))
    for r in op_rows:
        if r.programs and r.validity < VALID_TARGET:
            out.append((r.name, f"{100 * r.validity:.1f} % valid (< 90 %)",
                        REASONS.get(r.name, "no reason written")))
    return out


def _pct(a: int, b: int) -> str:
    return f"{100 * a / b:.1f}" if b else "-"


def render(fam_rows, op_rows, head: str, console: Console) -> None:
    """Print the family table, the op table (grouped by family) and the flags."""
    console.print(head)
    t = Table(title="families", title_justify="left")
    for c in ("family", "programs", "% programs", "% valid", "% tries accepted"):
        t.add_column(c, justify="left" if c == "family" else "right")
    for r in fam_rows:
        t.add_row(r.name, str(r.programs), _pct(r.programs, r.total), _pct(r.valid, r.programs),
                  _pct(r.accepted, r.tried))
    console.print(t)
    t = Table(title="ops", title_justify="left")
    for c in ("family", "op", "programs", "% programs", "% valid", "% tries accepted"):
        t.add_column(c, justify="left" if c in ("family", "op") else "right")
    for f in fam_rows:
        for r in op_rows:
            if r.family == f.name:
                t.add_row(r.family, r.name, str(r.programs), _pct(r.programs, r.total),
                          _pct(r.valid, r.programs), _pct(r.accepted, r.tried))
    console.print(t)
    flagged = flags(fam_rows, op_rows)
    console.print(f"flagged: {len(flagged)}")
    for name, what, why in flagged:
        console.print(f"  {name}: {what}; {why}")


def main(argv: list[str] | None = None) -> int:
    from aliasfuzz.errors import InvalidArgument
    from aliasfuzz.fuzz.eager import run_eager
    from aliasfuzz.fuzz.optional import toggled
    from aliasfuzz.fuzz.sample import generate
    from aliasfuzz.fuzz.strategies import GenStats
    from aliasfuzz.fuzz.validate import infer

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", "-n", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", default=f"bench/runs/coverage-{datetime.date.today()}.txt",
                    help="plain-text copy of the table ('-': none)")
    args = ap.parse_args(argv)

    stats = GenStats()
    t0 = time.perf_counter()
    progs = generate(args.n, args.seed, stats=stats)
    t_gen = time.perf_counter() - t0
    def one_valid(p) -> bool:
        try:
            infer(p)
        except InvalidArgument:
            return False
        return run_eager(p).error is None

    # a program with toggleable optional inputs is valid when both its forms are (the
    # torchscript pipeline calls both: aliasfuzz.fuzz.optional.toggled)
    valid = [one_valid(p) and (toggled(p) is None or one_valid(toggled(p))) for p in progs]
    fam_rows, op_rows = tabulate(progs, valid, stats.accepted, stats.rejected)
    head = (f"coverage of the default generator: {len(progs)} programs, seed {args.seed}, "
            f"{sum(valid)} valid; generated in {t_gen:.2f} s ({len(progs) / t_gen:.0f} programs/s)")
    render(fam_rows, op_rows, head, Console(width=130))
    if args.write != "-":
        buf = io.StringIO()
        render(fam_rows, op_rows, head, Console(file=buf, width=120, no_color=True))
        Path(args.write).write_text(buf.getvalue())
        print(f"written {args.write}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

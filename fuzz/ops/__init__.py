"""The op registry: one table from op name to :class:`OpDef` (rules, footprints, rendering).

Families live in one module each (``views``, ``functional``, ``inplace``, ``custom``,
``kernels``); this module only assembles them and checks that names are unique.
"""

from __future__ import annotations

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops import (
    autograd,
    control,
    custom,
    factory,
    fallbacks,
    foreach,
    functional,
    indexfam,
    inplace,
    kernel_probes,
    kernels,
    metadata,
    multiout,
    optional,
    outs,
    outs2,
    views,
    windows,
)
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta

__all__ = ["REGISTRY", "OpDef", "OpKind", "ValueMeta", "lookup", "ops_of_kind"]


def _assemble(*families) -> dict[str, OpDef]:
    table: dict[str, OpDef] = {}
    for fam in families:
        for d in fam.OPS:
            if d.name in table:
                raise RuntimeError(f"duplicate registry op {d.name!r}")
            table[d.name] = d
    return table


REGISTRY: dict[str, OpDef] = _assemble(
    views, metadata, functional, inplace, outs, indexfam, windows, fallbacks, foreach, outs2, multiout, optional, custom, factory, kernels, kernel_probes, control, autograd
)


def lookup(name: str) -> OpDef:
    """The registry row for ``name``; raise :class:`InvalidArgument` if there is none."""
    try:
        return REGISTRY[name]
    except KeyError:
        raise InvalidArgument(f"unknown op {name!r}") from None


def ops_of_kind(*kinds: OpKind) -> list[OpDef]:
    """Registry rows of the given kinds, in registry order."""
    return [d for d in REGISTRY.values() if d.kind in kinds]

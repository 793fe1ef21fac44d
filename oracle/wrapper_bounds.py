"""Out-of-bounds views made by Inductor's generated wrapper, caught as it makes them.

Inductor's Python wrapper (``torch/_inductor/codegen/wrapper.py``, torch 2.11-2.13) views
buffers and inputs with ``reinterpret_tensor(base, sizes, strides, offset)``
(``codegen_reinterpret_view``; the module global is
``torch._C._dynamo.guards._reinterpret_tensor``), which, unlike ``torch.as_strided``,
checks nothing: a view that reaches past its base's storage makes the kernels that take
it read or write memory that belongs to something else. The corpus entry
``crash-lowering-5fcbc5cdc0`` is one: the storage offset of a mutated view of an input
replayed on a buffer of Inductor's own that starts at 0,
``reinterpret_tensor(buf0, (2, 1), (3, 1), 11)`` on a 10-element ``buf0``: elements 11 to
14 written by a custom op, a heap corruption that glibc notices only at some later
``free`` (``oracle/heap.py``).

:func:`checked_views` replaces that global in every wrapper module Inductor loads in its
block (``PyCodeCache.load_by_key_path``, which compiles and cache hits both go through)
with one that measures each view against its base's real storage before making it
(:func:`out_of_bounds`): the sizes, strides and offset (relative to the base's own storage
offset) the wrapper computed at run time,
so dynamic shapes and views of the graph's inputs are judged too. The views are made as
before; what was out of bounds is recorded, and appended to a file at once when one is
given, so that the record survives a process the view's kernel then kills.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

__all__ = ["OutOfBounds", "OutOfBoundsView", "checked_views", "out_of_bounds", "read_found"]


@dataclass(frozen=True)
class OutOfBounds:
    """One view past its base's storage: the view (``sizes``, ``strides``, ``offset``, in
    elements), the storage's size in elements (``numel``) and the elements the view reaches
    (``lo``..``hi``)."""

    sizes: tuple[int, ...]
    strides: tuple[int, ...]
    offset: int
    numel: int
    lo: int
    hi: int
    #: the base's own storage offset, which ``offset`` is relative to (0 in records written
    #: before it was kept)
    base_offset: int = 0

    def message(self) -> str:
        """One sentence for an explanation."""
        at = f" (base at storage offset {self.base_offset})" if self.base_offset else ""
        return (f"Inductor's wrapper made reinterpret_tensor(buf, {self.sizes}, {self.strides}, "
                f"{self.offset}) of a storage of {self.numel} elements{at}, reaching elements "
                f"{self.lo} to {self.hi}: out of bounds")


def out_of_bounds(base: Any, sizes: Sequence[int], strides: Sequence[int],
                  offset: int) -> OutOfBounds | None:
    """The :class:`OutOfBounds` of the view ``reinterpret_tensor(base, sizes, strides,
    offset)`` would make when it reaches outside ``base``'s storage, else None; an empty view
    reaches nothing. ``offset`` is relative to ``base``'s own storage offset, in elements of
    its dtype: ``_reinterpret_tensor`` sets ``base.storage_offset() + offset_increment``
    (``torch/csrc/inductor/inductor_ops.cpp``; audit 45's b2717ee500 was an in-bounds
    ``reinterpret_tensor(x, (), (), -2)`` of an input at storage offset 2, read as absolute)."""
    sizes, strides, offset = tuple(int(n) for n in sizes), tuple(int(s) for s in strides), int(offset)
    if len(sizes) != len(strides) or any(n == 0 for n in sizes):
        return None
    numel = base.untyped_storage().nbytes() // base.element_size()
    start = int(base.storage_offset()) + offset
    lo = start + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True) if s < 0)
    hi = start + sum((n - 1) * s for n, s in zip(sizes, strides, strict=True) if s > 0)
    if lo >= 0 and hi < numel:
        return None
    return OutOfBounds(sizes, strides, offset, numel, lo, hi, int(base.storage_offset()))


class OutOfBoundsView(RuntimeError):
    """Raised by a checked ``reinterpret_tensor`` (:func:`checked_views` with ``stop``) in
    place of a view past its base's storage: no kernel writes through it."""


@contextlib.contextmanager
def checked_views(path: str | Path | None = None, *,
                  stop: bool = False) -> Iterator[list[OutOfBounds]]:
    """Check every ``reinterpret_tensor`` of the Inductor wrappers loaded in the block
    (module docstring); yields the list the views found out of bounds are appended to,
    each also written to ``path`` (one JSON line) before the view is returned, or, with
    ``stop``, instead of it: :class:`OutOfBoundsView` is raised (the compiled call fails
    there, before its kernels write out of bounds and corrupt the process). Patches
    ``torch._inductor.codecache.PyCodeCache.load_by_key_path``, restored on exit (a module
    loaded inside keeps its checking global, which records into this block's list)."""
    from torch._inductor.codecache import PyCodeCache

    found: list[OutOfBounds] = []
    real = PyCodeCache.__dict__["load_by_key_path"]

    def check(real_view):
        def reinterpret_tensor(base, sizes, strides, offset):
            bad = out_of_bounds(base, sizes, strides, offset)
            if bad is not None:
                found.append(bad)
                if path is not None:
                    with open(path, "a") as f:
                        f.write(json.dumps(asdict(bad)) + "\n")
                if stop:
                    raise OutOfBoundsView(bad.message())
            return real_view(base, sizes, strides, offset)

        reinterpret_tensor.checked = True
        return reinterpret_tensor

    def load_by_key_path(cls, *args, **kwargs):
        mod = real.__func__(cls, *args, **kwargs)
        view = getattr(mod, "reinterpret_tensor", None)
        if view is not None and not getattr(view, "checked", False):
            mod.reinterpret_tensor = check(view)
        return mod

    PyCodeCache.load_by_key_path = classmethod(load_by_key_path)
    try:
        yield found
    finally:
        PyCodeCache.load_by_key_path = real


def read_found(path: str | Path) -> list[OutOfBounds]:
    """The views :func:`checked_views` wrote to ``path`` (none when it is absent)."""
    try:
        lines = Path(path).read_text().splitlines()
    except OSError:
        return []
    out = []
    for line in lines:
        with contextlib.suppress(ValueError, TypeError):
            d = json.loads(line)
            out.append(OutOfBounds(tuple(d["sizes"]), tuple(d["strides"]), d["offset"],
                                   d["numel"], d["lo"], d["hi"], d.get("base_offset", 0)))
    return out

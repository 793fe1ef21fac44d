"""Module-level definitions that rendered programs need: custom ops and Triton kernels.

Each entry of :data:`SOURCES` is the Python source of one definition, keyed by the name it
binds. Importing this module executes every source once, here, so in-process programs
import the registered objects (``from aliasfuzz.fuzz.preludes import fz_add_one_``);
standalone repros paste the same source text (:func:`sources`), so the two never drift.
Custom ops live in the ``aliasfuzz`` torch.library namespace.
"""

from __future__ import annotations

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz._files import load_module

__all__ = ["SOURCES", "register", "sources"]

#: name bound by the definition -> its Python source (imports it needs included).
SOURCES: dict[str, str] = {}


def register(name: str, source: str) -> None:
    """Add a definition and execute it into this module's namespace."""
    if name in SOURCES:
        raise RuntimeError(f"prelude {name!r} registered twice")
    SOURCES[name] = source.strip("\n") + "\n"
    # A real file, not exec of a string: @triton.jit reads its kernel's source file.
    module = load_module("import torch\n\n" + SOURCES[name], tag=f"prelude_{name}")
    if not hasattr(module, name):
        raise RuntimeError(f"prelude source does not bind {name!r}")
    globals()[name] = getattr(module, name)


def sources(names) -> list[str]:
    """The source texts of ``names``, for pasting into a standalone file."""
    out = []
    for n in names:
        if n not in SOURCES:
            raise InvalidArgument(f"unknown prelude {n!r}")
        out += [SOURCES[n], ""]
    return out


def _load_all() -> None:
    # The families register their preludes when imported.
    from aliasfuzz.fuzz.ops import custom  # noqa: F401


_load_all()

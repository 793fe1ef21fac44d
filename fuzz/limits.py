"""The generator's bounds that the command line checks before torch is imported.

:func:`aliasfuzz.fuzz.strategies.make_config` enforces them, but importing it imports
torch (seconds on a busy host); ``run`` and ``sample`` read them from here to refuse a
bad flag at once, in the flag's own name (fresh user 40's B4).
"""

from __future__ import annotations

__all__ = ["MAX_STATEMENTS", "MAX_STATEMENTS_HELP"]

#: The most statements a generated program may be asked for (``max_statements``).
MAX_STATEMENTS = 256

#: ``--max-statements``' help, for ``run`` and ``sample`` alike (fresh user 41's B1: the
#: families' statements come on top of the main draw's).
MAX_STATEMENTS_HELP = ("statements of the generator's main draw, at most (8); the "
                       "advanced-indexing, metadata, optional-input and autograd families each "
                       "add at most one more to the programs they are given")

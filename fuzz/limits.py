"""The generator's bounds that the command line checks before torch is imported.

:func:`aliasfuzz.fuzz.strategies.make_config` enforces them, but importing it imports
torch (seconds on a busy host); ``run`` and ``sample`` read them from here to refuse a
bad flag at once, in the flag's own name (fresh user 40's B4).
"""

from __future__ import annotations

__all__ = ["MAX_STATEMENTS"]

#: The most statements a generated program may be asked for (``max_statements``).
MAX_STATEMENTS = 256

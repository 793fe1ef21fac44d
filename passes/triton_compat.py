"""Moved to :mod:`aliasfuzz.fuzz.triton_compat`: the eager reference needs the CPU Triton
layer as much as the pipelines do, and ``fuzz`` is the lowest layer (entered through
:func:`aliasfuzz.fuzz.process.setup`). This name stays an alias of that very module (one
module object, one ``enabled()`` state) for code that still imports it from here.
"""

import sys

from aliasfuzz.fuzz import triton_compat as _moved

sys.modules[__name__] = _moved

"""aliasfuzz: property-based fuzzing and verification of PyTorch's reinplacing passes.

The public surface is re-exported here; everything else is an implementation detail of
the ``fuzz`` (what a program is), ``passes`` (what the systems under test do with it) and
``oracle`` (whether they were right) layers.
"""

from aliasfuzz.errors import GenerationFailure, InvalidArgument

__version__ = "0.1.0"
__all__ = ["GenerationFailure", "InvalidArgument", "__version__"]

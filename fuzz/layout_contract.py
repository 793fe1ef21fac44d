"""The ``layout-readout`` rule: layout read by an op is generated only where PyTorch promises it.

Rows tagged ``observes_layout`` (``fz.storage_layout``: storage offset and storage size;
``fz.strides_of``: strides) turn layout into data. Compiled code owes eager's layout to such
an op only as far as a contract goes (oracle/README.md, "Observables and the contracts that
promise them"):

* the op is a custom op tagged ``torch.Tag.needs_exact_strides`` (the default of
  ``torch._functorch.config.custom_op_default_layout_constraint``): Inductor passes it
  "the same strides as observed in eager", compared as ``ir.significant_strides_equal``
  does (dims of size <= 1 never count; ``fz.strides_of`` reports them as 0);
* what is promised about a tensor depends on where it comes from. Functionalization replaces
  every tensor whose storage is written (a mutated input, a mutated intermediate, every
  alias of either) by a fresh functional value by design, and an AOT/Inductor graph is
  free to choose the layout of intermediates ("PT2 is not guaranteed to produce tensors
  with exactly the same stride as the eager variants", the compile manual); only two kinds
  of argument keep eager's layout in every pipeline:

  - a **program input** whose storage no earlier statement wrote: every pipeline passes
    the caller's own tensor (AOTAutograd replaces only mutated inputs; a synthetic base of
    aliased inputs is their whole storage, so offsets survive);
  - the result of **clone** whose storage no earlier statement wrote: a fresh tensor with
    its own storage (offset 0); Inductor dropping such a clone as a no-op is PyTorch
    #197489 (closed as a silent-correctness bug, shared case b05).

Any other argument (a view of an input, an intermediate of another op, anything on a
written storage) makes the program ``invalid`` with a message starting ``layout-readout:``.
So does ``as_strided`` reaching a storage element that is not an element of the tensor it is
taken from, or of a tensor whose storage was written before (its absolute offset and strides
then address a storage functionalization replaced): its result "will depend on the current
layout in memory" (the
``torch.as_strided`` docs), which functionalization does not keep (it gives a mutated tensor
a storage of its own: the second audit's four false ``setStorage ... out of bounds`` crashes;
PyTorch #140171);
the generator retries such statements, so generated programs read layout only under the
contract. Used by :func:`aliasfuzz.fuzz.validate.infer`.
"""

from __future__ import annotations

from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = ["FRESH_LAYOUT", "LAYOUT_READOUT", "LayoutReads", "storage_elements"]

#: The rule's name, the first word of its rejection messages.
LAYOUT_READOUT = "layout-readout"

#: registry rows whose result is a fresh tensor of its own storage -> the contract source.
FRESH_LAYOUT: dict[str, str] = {
    "clone": "aten::clone returns a tensor of its own storage; PyTorch #197489 (Inductor "
    "must not drop a clone whose storage offset differs from its source)",
}


def storage_elements(m: Any) -> set[int] | None:
    """The storage elements (in ``m.dtype`` units) a strided layout reaches; None above
    ``ENUM_LIMIT`` elements (:func:`aliasfuzz.fuzz.ops.overlap.elements` enumerates)."""
    from aliasfuzz.fuzz.ops.core import ENUM_LIMIT
    from aliasfuzz.fuzz.ops.overlap import elements

    if m.numel > ENUM_LIMIT:
        return None
    return set(elements(m).tolist())


def _outside(result: Any, source: Any) -> int | None:
    """The smallest storage element ``result`` reaches that ``source`` does not (None: none,
    or too large to enumerate, or not on one storage with one dtype)."""
    if result.storage != source.storage or result.dtype != source.dtype:
        return None
    r, s = storage_elements(result), storage_elements(source)
    if r is None or s is None:
        return None
    extra = r - s
    return min(extra) if extra else None


class LayoutReads:
    """The rule's state while :func:`~aliasfuzz.fuzz.validate.infer` walks a program:
    program inputs and fresh clone results not yet written (by storage name)."""

    def __init__(self, input_names: set[str]) -> None:
        self._promised: set[str] = set(input_names)
        self._written: set[str] = set()

    def check(self, step: Any) -> None:
        """Raise :class:`InvalidArgument` (``layout-readout: ...``) when ``step`` (a
        :class:`~aliasfuzz.fuzz.validate.Step`) reads the layout of an argument no
        contract promises, or is an ``as_strided`` reaching outside its source."""
        if step.op.op == "as_strided" and step.args and step.args[0] is not None:
            if step.args[0].storage in self._written:
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: as_strided of {step.op.args[0]!r} after its storage "
                    "was written: its absolute offset and strides address a storage "
                    "functionalization replaces"
                )
            outside = _outside(step.outs[0], step.args[0])
            if outside is not None:
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: as_strided reaches element {outside} of the storage, "
                    f"not an element of {step.op.args[0]!r}: its result depends on the "
                    "storage layout, which compiled code does not keep"
                )
        if "observes_layout" not in step.opdef.tags:
            return
        for name, meta in zip(step.op.args, step.args, strict=True):
            if meta is None:
                continue
            if name not in self._promised:
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} reads the layout of {name!r}, neither a "
                    "program input nor a clone: compiled code may choose its layout"
                )
            if meta.storage in self._written:
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} reads the layout of {name!r} after its "
                    "storage was written: functionalization replaces a written tensor"
                )

    def record(self, step: Any) -> None:
        """Note what ``step`` writes and the fresh tensors it binds."""
        written = step.opdef.written(step.args, step.op.params)
        self._written |= {m.storage for m in written if m is not None}
        if step.op.op in FRESH_LAYOUT:
            self._promised.update(step.op.out)

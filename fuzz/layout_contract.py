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
So does ``as_strided`` (or ``as_strided_copy``, a clone of that view: :data:`ABSOLUTE_READS`)
taken from an intermediate (not on an input's storage nor a clone's) that is not
:func:`anchored`: eager chose its storage offset, and compiled code need not keep it (the
eighth audit's crash-functionalization-d99d750b93: ``slice_scatter``'s result kept its
input's offset 318 in eager, ``v2.as_strided((), (), 328)`` read element 328 of it, and
functionalization's fresh result has no such element); and ``as_strided`` reaching a
storage element that is not an element of the tensor it is taken from, or of a tensor whose
storage was written before (its absolute offset and strides
then address a storage functionalization replaced): its result "will depend on the current
layout in memory" (the
``torch.as_strided`` docs), which functionalization does not keep (it gives a mutated tensor
a storage of its own: the second audit's four false ``setStorage ... out of bounds`` crashes;
PyTorch #140171);
the generator retries such statements, so generated programs read layout only under the
contract.

The offset and strides of ``as_strided`` are absolute in the storage, so a **write through**
an ``as_strided`` view (an in-place op, ``out=`` or ``copy_`` on the view or on any alias of
it, found by following the aliases each statement returns) means what eager means only when
the view's source is :func:`anchored`: at storage offset 0 and dense from there (its
elements are storage elements ``0 .. numel-1``, each once; a plain contiguous input, a fresh
intermediate, a prefix of a larger storage). Functionalization replays such a write as ``as_strided_scatter(source,
...)`` on a base that has the source's own numel (AOTAutograd treats a mutated input as a
base of its own; ``_as_strided_scatter_meta`` checks the absolute offset against
``input.numel()``), so an offset past the source's extent is out of bounds there while eager
writes the caller's storage (the third audit's ``crash-aot-c32458ee7d``: a 0-d input at
offset 3, ``x.as_strided((), (), 3).add_(1)``). For the same reason such a view is rejected
when it is read (or returned) after its storage was written since it was taken: AOTAutograd
regenerates it from the written base with the same absolute offset (``setStorage ... out of
bounds``, as above). An ``as_strided`` of an anchored source (a plain contiguous input, a
fresh intermediate) stays valid, when the intermediate is row-major: a dense intermediate in
another memory order (``put`` keeps its input's) is laid out as eager chose, which compiled
code need not keep. ``resize_`` / ``resize_as_`` (contiguous from the tensor's
own storage offset) and ``set_.storage`` (``x.set_(y.untyped_storage(), offset, size,
stride)``: the layout is taken on ``y``, :data:`SOURCE_ARG`) lay their result out by
absolute storage positions too, and follow the same rule as ``as_strided_``. Used by
:func:`aliasfuzz.fuzz.validate.infer`.
"""

from __future__ import annotations

from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = ["ABSOLUTE_READS", "FRESH_LAYOUT", "LAYOUT_READOUT", "SOURCE_ARG", "LayoutReads", "anchored",
           "storage_elements"]

#: The rule's name, the first word of its rejection messages.
LAYOUT_READOUT = "layout-readout"

#: registry rows whose result is a fresh tensor of its own storage -> the contract source.
FRESH_LAYOUT: dict[str, str] = {
    "clone": "aten::clone returns a tensor of its own storage; PyTorch #197489 (Inductor "
    "must not drop a clone whose storage offset differs from its source)",
}


#: rows that read ``as_strided(size, stride, offset)`` of their first argument, the offset
#: absolute in its storage: the view itself, its in-place form ``as_strided_`` (the same
#: layout on the argument object), and ``as_strided_copy`` (a clone of that view)
ABSOLUTE_READS = ("as_strided", "as_strided_", "as_strided_copy", "resize_", "resize_as_",
                  "set_.storage")

#: the rows among them whose result is the ``as_strided`` view itself (the object relaid)
STRIDED_VIEWS = ("as_strided", "as_strided_", "resize_", "resize_as_", "set_.storage")

#: :data:`ABSOLUTE_READS` rows whose layout is taken on another argument's storage than the
#: first's -> that argument (``x.set_(y.untyped_storage(), offset, size, stride)`` lays
#: ``x`` out on ``y``'s storage: ``y`` is the tensor it is taken from); ``resize_`` and
#: ``resize_as_`` relay their first argument from its own offset (contiguous strides)
SOURCE_ARG: dict[str, int] = {"set_.storage": 1}


def _source(step: Any) -> int:
    return SOURCE_ARG.get(step.op.op, 0)


def _strided_view(step: Any) -> Any:
    """The ``as_strided`` layout an :data:`ABSOLUTE_READS` step reads on its argument."""
    if step.op.op in STRIDED_VIEWS:
        return step.outs[0]
    from aliasfuzz.fuzz.ops.views import _as_strided

    return _as_strided(step.args[:1], step.op.params, ())[0]


def storage_elements(m: Any) -> set[int] | None:
    """The storage elements (in ``m.dtype`` units) a strided layout reaches; None above
    ``ENUM_LIMIT`` elements (:func:`aliasfuzz.fuzz.ops.overlap.elements` enumerates)."""
    from aliasfuzz.fuzz.ops.core import ENUM_LIMIT
    from aliasfuzz.fuzz.ops.overlap import elements

    if m.numel > ENUM_LIMIT:
        return None
    return set(elements(m).tolist())


def anchored(m: Any) -> bool:
    """Whether layout ``m``'s elements are exactly storage elements ``0 .. m.numel-1``
    (offset 0, dense, each once), so that an absolute ``as_strided`` offset within ``m``
    addresses the same elements on the base functionalization makes of it (a tensor of
    ``m``'s own numel). False when too large to enumerate (conservative)."""
    if m.offset != 0:
        return False
    els = storage_elements(m)
    return els is not None and len(els) == m.numel and els == set(range(m.numel))


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
    program inputs and fresh clone results not yet written (by storage name), and the
    as_strided views of unanchored sources (with their aliases) that may not be written
    through, nor used once their storage was written."""

    def __init__(self, input_names: set[str], input_storages: set[str] = frozenset(),
                 sole_inputs: dict[str, Any] | None = None) -> None:
        self._promised: set[str] = set(input_names)
        #: storage -> the layout of the one program input on it (storages of one input)
        self._sole: dict[str, Any] = dict(sole_inputs or {})
        #: storages whose layout the caller owns (inputs) or a contract fixes (clone results)
        self._own: set[str] = set(input_storages)
        self._written: set[str] = set()
        #: as_strided views of a source that is not :func:`anchored`, and their aliases:
        #: name -> (the name the as_strided was taken from, the storage)
        self._strided: dict[str, tuple[str, str]] = {}
        #: those of them whose storage was written after they were taken
        self._stale: set[str] = set()

    def check(self, step: Any) -> None:
        """Raise :class:`InvalidArgument` (``layout-readout: ...``) when ``step`` (a
        :class:`~aliasfuzz.fuzz.validate.Step`) reads the layout of an argument no
        contract promises, is an ``as_strided`` reaching outside its source, or writes
        through (or reads a stale) as_strided view of an unanchored source."""
        from aliasfuzz.fuzz.ops._layout import is_contiguous  # ops imports this module

        k = _source(step)
        if step.op.op in ABSOLUTE_READS and len(step.args) > k and step.args[k] is not None:
            src, name = step.args[k], step.op.args[k]
            if src.storage in self._written and not self._input_copy(step):
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} of {name!r} after its storage "
                    "was written: its absolute offset and strides address a storage "
                    "functionalization replaces"
                )
            if src.storage not in self._own and not anchored(src):
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} of {name!r}, an intermediate "
                    f"at storage offset {src.offset} (not dense from offset 0): its storage "
                    "offset and strides are eager's choice, which compiled code need not keep"
                )
            if src.storage not in self._own and not is_contiguous(src.shape, src.stride):
                # fresh user 47's B2 (f2cdbcfd33): put keeps x0's strides (3, 9, 1) in eager,
                # Inductor's result had (9, 3, 1), and resize_ read the memory order
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} of {name!r}, an intermediate with "
                    f"strides {tuple(src.stride)} (dense, not row-major): the order of its "
                    "elements in memory is eager's choice, which compiled code need not keep"
                )
            outside = _outside(_strided_view(step), src)
            if outside is not None:
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} reaches element {outside} of the storage, "
                    f"not an element of {name!r}: its result depends on the "
                    "storage layout, which compiled code does not keep"
                )
        self._check_strided(step)
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

    def _input_copy(self, step: Any) -> bool:
        """Whether ``step`` is an ``as_strided_copy`` of a written program input that keeps
        eager's meaning under the contract (PyTorch #133512, shared case c01:
        ``x.mul_(2); torch.as_strided_copy(x, (2,), (3,))`` on a stride-3 input): its source
        is the input itself (the input's layout, the only input on its storage, so no
        synthetic base), it reads only the input's own elements, and the same size, strides
        and offset stay in bounds on a dense tensor of the input's numel, which is what
        functionalization gives the written input. Compiled code then reads other elements
        of the right tensor (the known value bug), never memory outside it (the second
        audit's ``setStorage ... out of bounds`` crashes stay rejected)."""
        if step.op.op != "as_strided_copy":
            return False
        src, inp = step.args[0], self._sole.get(step.args[0].storage)
        if inp is None or (src.offset, src.shape, src.stride, src.dtype) != (
                inp.offset, inp.shape, inp.stride, inp.dtype):
            return False
        view = _strided_view(step)
        if view.numel == 0 or _outside(view, src) is not None or storage_elements(view) is None:
            return False
        reach = view.offset + sum((n - 1) * abs(st) for n, st in zip(view.shape, view.stride, strict=True))
        return reach < src.numel

    def _check_strided(self, step: Any) -> None:
        """The write-through half of the rule (module docstring): ``step`` may not write
        through an as_strided view of an unanchored source, nor use one that went stale."""
        mutated = set(step.opdef.mutated_indices(len(step.args)))
        for i, name in enumerate(step.op.args):
            if name not in self._strided:
                continue
            source = self._strided[name][0]
            if i in mutated:
                raise InvalidArgument(
                    f"{LAYOUT_READOUT}: {step.op.op} writes through {name!r}, an as_strided "
                    f"view of {source!r}, which is not dense from storage offset 0: "
                    "functionalization replays the write with as_strided_scatter on "
                    f"a base the size of {source!r}, where the absolute offset addresses "
                    "other elements or none"
                )
            if name in self._stale:
                raise InvalidArgument(self._stale_message(name, f"{step.op.op} reads"))

    def _stale_message(self, name: str, what: str) -> str:
        return (f"{LAYOUT_READOUT}: {what} {name!r}, an as_strided view of "
                f"{self._strided[name][0]!r} (not dense from storage offset 0), "
                "after its storage was written: compiled code regenerates the view from the "
                "written base with the same absolute offset")

    @property
    def stale(self) -> frozenset[str]:
        """The as_strided views (and aliases) whose storage was written since they were
        taken: a later statement may not use them, nor the program return them."""
        return frozenset(self._stale)

    def check_outputs(self, outputs: Any) -> None:
        """Raise :class:`InvalidArgument` when the program returns a stale as_strided view
        (see :meth:`check`)."""
        for name in outputs:
            if name in self._stale:
                raise InvalidArgument(self._stale_message(name, "the program returns"))

    def record(self, step: Any) -> None:
        """Note what ``step`` writes and the fresh tensors and views it binds."""
        written = {m.storage for m in step.opdef.written(step.args, step.op.params) if m is not None}
        self._written |= written
        self._stale |= {n for n, (_, st) in self._strided.items() if st in written}
        if step.op.op in FRESH_LAYOUT:
            self._promised.update(step.op.out)
            self._own.update(m.storage for m in step.outs if m is not None)
        sources = [(n, m) for n, m in zip(step.op.args, step.args, strict=True) if m is not None]
        k = _source(step)
        if (step.op.op in STRIDED_VIEWS and len(step.args) > k and step.args[k] is not None
                and not anchored(step.args[k])):
            origin = step.op.args[k]
        else:  # an alias of a tracked view is tracked too (views, in-place results)
            origin = next((self._strided[n][0] for n, _ in sources if n in self._strided), None)
        if origin is None:
            return
        on = {m.storage for n, m in sources if n in self._strided or n == origin}
        for name, meta in zip(step.op.out, step.outs, strict=True):
            if meta is not None and meta.storage in on:
                self._strided[name] = (origin, meta.storage)

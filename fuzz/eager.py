"""The eager reference: deterministic inputs, running a program, and its alias map.

:func:`make_inputs` builds every input storage deterministically and each input as
``torch.as_strided(storage, shape, stride, offset)``, so inputs keep their exact layout
and aliased inputs share storage. :func:`run_eager` runs the rendered program on fresh
inputs and returns the outputs, the inputs after the call and the alias map;
:func:`interpret` runs the registry's ``apply`` callables instead of rendered source (the
two must agree: a property test checks it). Every eager run sets the process up itself
(:func:`aliasfuzz.fuzz.process.setup`), whatever ran before it in the process.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import torch

from aliasfuzz.fuzz import process
from aliasfuzz.fuzz.grads import backward
from aliasfuzz.fuzz.grads import leaves as grad_leaves
from aliasfuzz.fuzz.ir import Program, StorageSpec
from aliasfuzz.fuzz.ops import lookup
from aliasfuzz.fuzz.ops._build import lit

__all__ = [
    "EagerResult",
    "alias_map",
    "clone_inputs",
    "interpret",
    "make_inputs",
    "run_eager",
    "storage_expr",
]


def storage_expr(s: StorageSpec) -> str:
    """Python source building storage ``s`` as a 1-d CPU tensor (shared with repros)."""
    dt = f"torch.{s.dtype}"
    a = s.init_args
    n = s.numel
    if s.init == "arange":
        start, step = a.get("start", 0), a.get("step", 1)
        if s.dtype == "bool":
            return f"(torch.arange({n}) % 2).to(torch.bool)"
        return f"torch.arange({lit(start)}, {lit(start)} + {n} * {lit(step)}, {lit(step)}, dtype=torch.float64)[:{n}].to({dt})"
    if s.init == "randn":
        return (
            f"torch.randn({n}, generator=torch.Generator().manual_seed({a.get('seed', 0)}), "
            f"dtype=torch.float64).to({dt})"
        )
    if s.init == "randint":
        lo, hi = a.get("low", 0), a.get("high", 2 if s.dtype == "bool" else 10)
        return (
            f"torch.randint({lo}, {hi}, ({n},), generator=torch.Generator().manual_seed("
            f"{a.get('seed', 0)})).to({dt})"
        )
    if s.init == "ones":
        return f"torch.ones({n}, dtype={dt})"
    if s.init == "zeros":
        return f"torch.zeros({n}, dtype={dt})"
    if s.init == "values":
        return f"torch.tensor({lit(list(a['data']))}, dtype=torch.float64).to({dt}).reshape({n})"
    if s.init == "linspace":
        return f"torch.linspace({lit(a.get('start', -1.0))}, {lit(a.get('end', 1.0))}, {n}, dtype=torch.float64).to({dt})"
    raise AssertionError(s.init)


def _build_storage(s: StorageSpec) -> torch.Tensor:
    # The same expression the repro renders, so eager and repro.py build identical inputs.
    return eval(storage_expr(s), {"torch": torch})  # noqa: S307 - our own literal source


def make_inputs(program: Program, device: str | torch.device = "cpu") -> tuple[Any, ...]:
    """Fresh inputs for ``program`` on ``device``, with exact sizes, strides and offsets.

    Float inputs marked ``requires_grad`` are leaves (detached views of their storage).
    An ``optional`` input marked ``none`` is ``None``.
    """
    storages = {s.name: _build_storage(s).to(device) for s in program.storages}
    out = []
    for t in program.inputs:
        if t.none:
            out.append(None)
            continue
        v = torch.as_strided(storages[t.storage], t.shape, t.stride, t.offset)
        if t.requires_grad:
            v = v.detach().requires_grad_()
        out.append(v)
    return tuple(out)


def clone_inputs(inputs: Sequence[Any], device: str | None = None) -> tuple[Any, ...]:
    """Deep copies of ``inputs`` with the same sizes, strides, offsets and storage sharing,
    on ``device`` (default: each input's own).

    Inputs on one storage stay on one (copied, byte for byte) storage; ``requires_grad``
    leaves stay leaves; non-tensors are passed through. Used wherever a run needs a pristine
    copy of inputs it must not consume (confirmation runs, TorchScript's per-call eager
    twin) and for the other-device eager opinion (``oracle/opinions.py``).
    """
    copies: dict[Any, Any] = {}
    out = []
    for t in inputs:
        if not isinstance(t, torch.Tensor):
            out.append(t)
            continue
        dev = t.device if device is None else torch.device(device)
        st = t.untyped_storage()
        key = (st.data_ptr(), str(t.device)) if st.nbytes() else id(st)
        if key not in copies:
            if dev == t.device:
                copies[key] = st.clone()
            else:
                raw = torch.empty(0, dtype=torch.uint8, device=t.device).set_(st)
                copies[key] = raw.detach().to(dev, copy=True).untyped_storage()
        c = torch.empty(0, dtype=t.dtype, device=dev)
        c.set_(copies[key], t.storage_offset(), t.size(), t.stride())
        out.append(c.requires_grad_() if t.requires_grad else c)
    return tuple(out)


def _storage_key(t: torch.Tensor) -> int:
    return t.untyped_storage().data_ptr() if t.untyped_storage().nbytes() else id(t.untyped_storage())


def alias_map(
    outputs: Sequence[Any], inputs: Sequence[Any], input_names: Sequence[str]
) -> dict[str, tuple[str, ...]]:
    """Which outputs share storage with which inputs and with other outputs.

    Keys are ``"out<i>"``; values name the inputs (by name) and the other outputs
    (``"out<j>"``) on the same storage, sorted. Non-tensor outputs map to ``()``.
    Storages are told apart by data pointer (empty storages by identity).

    A tensor of no elements aliases nothing: no value can be read or written through it,
    only its identity (or ``resize_``) could tell, which no pipeline promises; it maps to
    ``()`` and no other entry names it (the eighth audit's e65ce44d27: Inductor returned a
    0-element input itself where eager returns a fresh empty tensor, and its repro, which
    compares data pointers, could not show it).
    """
    def seen(t: Any) -> bool:
        return isinstance(t, torch.Tensor) and t.numel() > 0

    keys_in = {
        name: _storage_key(t)
        for name, t in zip(input_names, inputs, strict=True)
        if seen(t)
    }
    keys_out = [_storage_key(o) if seen(o) else None for o in outputs]
    result = {}
    for i, k in enumerate(keys_out):
        if k is None:
            result[f"out{i}"] = ()
            continue
        shared = [n for n, kin in keys_in.items() if kin == k]
        shared += [f"out{j}" for j, kj in enumerate(keys_out) if j != i and kj == k]
        result[f"out{i}"] = tuple(sorted(shared))
    return result


@dataclass
class EagerResult:
    """Outputs, inputs after the call, and aliasing of one eager run (or its exception).

    ``grads``: when some input is a leaf requiring grad, the gradients of
    :func:`aliasfuzz.fuzz.grads.loss` of the outputs, aligned with the inputs (None for an
    input that is not such a leaf; :func:`aliasfuzz.fuzz.grads.backward`); None when there
    is no gradient to compare. ``grad_error``: the exception the backward raised (then
    ``grads`` is None)."""

    outputs: tuple[Any, ...] = ()
    inputs_after: tuple[Any, ...] = ()
    aliases: dict[str, tuple[str, ...]] = field(default_factory=dict)
    error: BaseException | None = None
    grads: tuple[Any, ...] | None = None
    grad_error: BaseException | None = None


def normalize_outputs(ret: Any) -> tuple[Any, ...]:
    """A program's return value as its tuple of outputs: ``()`` for None, a tuple or a list
    item by item, anything else as one output. Eager and every pipeline use this one reading
    (fresh user 39's B4: a case returning a list was one output in eager and two compiled)."""
    if ret is None:
        return ()
    return tuple(ret) if isinstance(ret, tuple | list) else (ret,)


def run_callable(fn: Callable, program: Program, inputs: tuple[Any, ...]) -> EagerResult:
    """Call ``fn(*inputs)`` and collect outputs, inputs after the call and the alias map.

    When an input is a leaf requiring grad, the backward of the shared loss runs too
    (``grads`` / ``grad_error``, :mod:`aliasfuzz.fuzz.grads`). The call is the eager
    reference, a run of the system under test: it runs inside
    :func:`aliasfuzz.fuzz.process.system_under_test`, which sets the process up first (a
    user Triton kernel launched on CPU tensors needs the CPU Triton layer).
    """
    names = [t.name for t in program.inputs]
    try:
        with process.system_under_test("eager"):
            outputs = normalize_outputs(fn(*inputs))
    except Exception as e:  # the program's own failure is data for the caller
        return EagerResult(inputs_after=inputs, error=e)
    res = EagerResult(outputs, inputs, alias_map(outputs, inputs, names))
    if grad_leaves(inputs):
        try:
            with process.system_under_test("eager backward"):
                res.grads = backward(outputs, inputs)
        except Exception as e:  # eager's backward refusing is data: no gradients to compare
            res.grad_error = e
    return res


def run_eager(
    program: Program, inputs: tuple[Any, ...] | None = None, device: str = "cpu"
) -> EagerResult:
    """Run the rendered program eagerly on ``inputs`` (fresh ones when None)."""
    from aliasfuzz.fuzz.render import load_function

    fn, _ = load_function(program)
    if inputs is None:
        inputs = make_inputs(program, device)
    return run_callable(fn, program, inputs)


def interpret(program: Program, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Run ``program`` through the registry's ``apply`` callables (no rendered source)."""
    env: dict[str, Any] = {t.name: v for t, v in zip(program.inputs, inputs, strict=True)}
    with process.system_under_test("eager (interpreted)"):
        for op in program.body:
            d = lookup(op.op)
            res = d.apply([env[a] for a in op.args], op.params)
            if len(op.out) == 1 and d.n_out == 1:
                env[op.out[0]] = res
            elif op.out:
                env.update(zip(op.out, res, strict=True))
    return tuple(env[o] for o in program.outputs)

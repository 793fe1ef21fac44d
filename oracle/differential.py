"""The differential check: a compiled run against the eager reference, five named checks.

Checks run in this fixed order, each with its own message (Alive2's style):

1. ``values``: returned values (count, type, dtype, shape, contents);
2. ``inputs``: every input after the call;
3. ``aliasing``: an output that shares storage with an input in eager must share it with the
   same inputs compiled, and a fresh output must stay fresh;
4. ``requires_grad``: of every output and every input after the call;
5. ``grads``: when inputs are leaves requiring grad, the gradients of the shared loss
   (:mod:`aliasfuzz.fuzz.grads`) with respect to each of them, compared like values (the
   fp64 shadow's own backward confirms a float mismatch). A compiled backward that raises
   where eager's runs is a ``crash``; when eager's backward raises there is no reference and
   the check is skipped (never a finding), as it is when the caller names why the program's
   eager gradient is not definite (``no_grads``) and when the compiled side ran no backward
   (the blame cut's forward snapshots; outputs cut from autograd fail ``requires_grad``);
6. ``exceptions``: under this equivalence policy:

   * both raise: equivalent (compiled stacks wrap errors, so types are only noted);
   * compiled raises, eager does not: ``crash``;
   * eager raises, compiled does not: ``invalid-program`` (eager defines the semantics;
     a program eager rejects has none to compare with).

When an exception occurred, checks 1-5 are skipped. Floating values compare with dtype-
dependent tolerances (:data:`TOLERANCES`; float32 is the cases' rtol 1e-4 / atol 1e-5);
integers and bools exactly (except integers that are the bits of normal floats, a
``view(dtype)`` of float data: those compare as the floats they are); NaNs equal NaNs.
A floating mismatch is confirmed against an fp64 shadow run first, as
``torch._dynamo.utils.same(fp64_ref=...)`` does: the compiled value must be further from
the fp64 reference than twice eager's error plus atol/10. The shadow runs the same program
eagerly on :func:`shadow_inputs`: every floating input keeps its size, strides and storage
offset over an fp64 copy of its whole storage, and inputs sharing a storage share the copy,
so it computes eager's semantics at higher precision (a shadow on ``.to(torch.float64)``
copies made strided inputs contiguous and reproduced layout miscompiles, PyTorch #133512).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import torch

from aliasfuzz.errors import one_line
from aliasfuzz.fuzz.eager import EagerResult
from aliasfuzz.oracle.verdict import Verdict

__all__ = ["CHECKS", "TOLERANCES", "Check", "differential", "shadow_inputs", "tolerance"]

CHECKS = ("values", "inputs", "aliasing", "requires_grad", "grads", "exceptions")

#: Checks that see one thing: memory contents, read back through an output or through an
#: input after the call (a program that returns the input it mutates fails ``values``;
#: the same program returning nothing fails ``inputs``).
_CLASS = {"inputs": "values"}


def check_class(check: str | None) -> str | None:
    """The kind of departure a failed check names: ``inputs`` is ``values``, every other
    check (or None) is itself. Findings of one class are one failure for shrinking and one
    root cause for the corpus."""
    return _CLASS.get(check, check) if check is not None else None

#: dtype -> (rtol, atol) for floating dtypes; everything else compares exactly.
TOLERANCES: dict[torch.dtype, tuple[float, float]] = {
    torch.float32: (1e-4, 1e-5),
    torch.float64: (1e-7, 1e-9),
    torch.float16: (1e-2, 1e-3),
    torch.bfloat16: (1.6e-2, 1e-3),
}


def tolerance(dtype: torch.dtype) -> tuple[float, float]:
    """(rtol, atol) for ``dtype``; (0, 0) for integers, bools and anything not listed."""
    return TOLERANCES.get(dtype, (0.0, 0.0))


@dataclass(frozen=True)
class Check:
    """One named check's outcome; ``verdict`` is OK when it passed."""

    name: str
    verdict: Verdict
    message: str = ""
    where: str = ""  # "out0", "input x", ...
    eager: Any = None  # the two sides, for the printer
    compiled: Any = None

    @property
    def passed(self) -> bool:
        return self.verdict is Verdict.OK


def shadow_inputs(inputs: Sequence[Any]) -> tuple[Any, ...] | None:
    """fp64 copies of ``inputs`` for the shadow run, layouts and aliasing kept.

    Each storage holding floating inputs is copied whole and upcast to float64 once; every
    floating input becomes a tensor on that copy with its own sizes, strides and storage
    offset (``Tensor.set_``), so inputs sharing a storage share the upcast storage. Other
    inputs (integers, bools, non-tensors) are passed through; ``requires_grad`` leaves stay
    leaves. Returns None when a storage is viewed by inputs of several dtypes, or by a
    floating and a non-floating input (no upcast keeps both views).
    """
    by_storage: dict[Any, list[torch.Tensor]] = {}
    for t in inputs:
        if isinstance(t, torch.Tensor):
            by_storage.setdefault(_storage_key(t), []).append(t)
    upcast: dict[Any, torch.Tensor] = {}
    for key, views in by_storage.items():
        dtypes = {v.dtype for v in views}
        floating = [v.is_floating_point() for v in views]
        if any(floating) and (len(dtypes) > 1 or not all(floating)):
            return None
        if all(floating):
            v = views[0]
            n = v.untyped_storage().nbytes() // v.element_size()
            flat = torch.empty(0, dtype=v.dtype, device=v.device)
            flat.set_(v.untyped_storage(), 0, (n,), (1,))
            upcast[key] = flat.detach().to(torch.float64, copy=True)
    out = []
    for t in inputs:
        base = upcast.get(_storage_key(t)) if isinstance(t, torch.Tensor) else None
        if base is None:
            out.append(t)
            continue
        c = torch.empty(0, dtype=torch.float64, device=t.device)
        c.set_(base.untyped_storage(), t.storage_offset(), t.size(), t.stride())
        out.append(c.requires_grad_() if t.requires_grad else c)
    return tuple(out)


def _storage_key(t: torch.Tensor) -> Any:
    st = t.untyped_storage()
    return (st.data_ptr(), str(t.device)) if st.nbytes() else id(st)


def _close(a: torch.Tensor, b: torch.Tensor) -> bool:
    rtol, atol = tolerance(a.dtype)
    return torch.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True)


def _shadow_confirms(eager: torch.Tensor, comp: torch.Tensor, ref: Any) -> bool:
    """Whether the fp64 reference confirms a float mismatch (compiled is really off)."""
    if not isinstance(ref, torch.Tensor) or ref.shape != eager.shape:
        return True  # no usable reference: the mismatch stands
    # The shadow may run elsewhere (CPU fp64 for a CUDA program): compare on the CPU.
    ref = ref.detach().to("cpu", torch.float64)
    _, atol = tolerance(eager.dtype)

    def err(t: torch.Tensor) -> float:
        if not ref.numel():
            return 0.0
        return (t.detach().to("cpu", torch.float64) - ref).abs().nan_to_num(0.0).max().item()

    e_err, c_err = err(eager), err(comp)
    return c_err > 2.0 * e_err + atol / 10.0


_BITS_AS_FLOAT = {torch.int32: torch.float32, torch.int64: torch.float64, torch.int16: torch.float16}


def _float_bits_close(e: torch.Tensor, c: torch.Tensor) -> bool:
    """Integers that are the bits of normal floats (a ``view(dtype)`` of float data) and
    agree as those floats: a float rounding difference, not an integer one. Genuine small
    integers read as denormals and keep the exact comparison."""
    f = _BITS_AS_FLOAT.get(e.dtype)
    if f is None:
        return False
    ef, cf = e.contiguous().view(f), c.contiguous().view(f)
    tiny = torch.finfo(f).tiny
    normal = (ef.abs() >= tiny) & ef.isfinite() & (cf.abs() >= tiny) & cf.isfinite()
    differ = e != c
    return bool((normal | ~differ).all()) and _close(ef, cf)


#: The NaN a float dtype's arithmetic writes (x86 and ATen's), as the integer of its bits.
_CANONICAL_NAN = ((torch.bfloat16, torch.int16, 0x7FC0), (torch.float16, torch.int16, 0x7E00),
                  (torch.float32, torch.int32, 0x7FC00000),
                  (torch.float64, torch.int64, 0x7FF8000000000000))


def _nan_bits_only(e: torch.Tensor, c: torch.Tensor) -> bool:
    """Integers whose bytes differ only in NaNs of a float dtype the program viewed them as:
    read as that dtype, every differing element is NaN on both sides and one side holds the
    canonical NaN there (the other's payload or sign was kept). IEEE 754 leaves NaN payloads
    to the implementation and PyTorch promises none (audit 42, a06083e9e6: ``neg_`` of an
    int64 -1 viewed as bfloat16, then ``add_(1.0)``: eager wrote 0x7FC0, the vectorized
    kernel kept 0xFFFF, filed as "values differ"). Two integers that both read as NaN but
    neither as the canonical one keep the exact comparison: -1 against -2 is an integer bug."""
    if e.is_floating_point() or e.is_complex() or e.dtype == torch.bool or e.numel() == 0:
        return False
    # a copy of standard strides: a contiguous one-element tensor may keep any stride
    # (campaign 53, program 300: stride 3, which view(uint8) refuses)
    eb = e.detach().reshape(-1).clone(memory_format=torch.contiguous_format).view(torch.uint8)
    cb = c.detach().reshape(-1).clone(memory_format=torch.contiguous_format).view(torch.uint8)
    for f, bits, canonical in _CANONICAL_NAN:
        if eb.numel() % f.itemsize:
            continue
        ef, cf = eb.view(f), cb.view(f)
        differ = eb.view(bits) != cb.view(bits)
        if not differ.any():
            continue
        both_nan = ef.isnan() & cf.isnan()
        one_canonical = (eb.view(bits) == canonical) | (cb.view(bits) == canonical)
        if bool((both_nan & one_canonical)[differ].all()):
            return True
    return False


def _compare(where: str, e: Any, c: Any, ref: Any) -> str | None:
    """Why ``c`` differs from ``e`` (None if equal under the tolerances)."""
    if isinstance(e, torch.Tensor) != isinstance(c, torch.Tensor):
        return f"{where}: {type(e).__name__} in eager, {type(c).__name__} compiled"
    if not isinstance(e, torch.Tensor):
        return None if e == c else f"{where}: {e!r} in eager, {c!r} compiled"
    if e.dtype != c.dtype:
        return f"{where}: dtype {e.dtype} in eager, {c.dtype} compiled"
    if e.shape != c.shape:
        return f"{where}: shape {tuple(e.shape)} in eager, {tuple(c.shape)} compiled"
    if e.device.type == "meta" or c.device.type == "meta":
        return None
    e_, c_ = e.detach().cpu(), c.detach().cpu()
    if _close(e_, c_):
        return None
    if e.is_floating_point() and not _shadow_confirms(e_, c_, ref):
        return None
    if _float_bits_close(e_, c_) or _nan_bits_only(e_, c_):
        return None
    diff = (e_ != c_) & ~(e_.isnan() & c_.isnan()) if e.is_floating_point() else e_ != c_
    first = tuple(int(i) for i in diff.nonzero()[0]) if diff.any() else ()
    at = f" at {list(first)}" if first else ""
    if first:
        at += f": {_scalar(e_[first])} in eager, {_scalar(c_[first])} compiled"
    return f"{where}: values differ{at}"


def _scalar(t: torch.Tensor) -> str:
    """One element ``t`` (a 0-d tensor) as the shortest decimal that reads back to the same
    value in its own dtype: a float32 ``3.3619375`` rather than ``item()``'s float64
    ``3.3619375228881836`` (fresh user 49's B12: the extra digits are noise in a title).
    Integers, bools and float64 print as Python's ``repr``."""
    v = t.item()
    if not t.is_floating_point() or t.dtype == torch.float64 or not math.isfinite(v):
        return repr(v)
    for digits in range(1, 18):
        short = float(f"{v:.{digits}g}")
        if torch.tensor(short, dtype=t.dtype).item() == v:
            return repr(short)
    return repr(v)


def _values(
    name: str, kind: str, e: Sequence[Any], c: Sequence[Any], refs: Sequence[Any], labels
) -> Check:
    if len(e) != len(c):
        return Check(name, Verdict.MISCOMPILE, f"{len(e)} {kind} in eager, {len(c)} compiled")
    for i, (ev, cv) in enumerate(zip(e, c, strict=False)):
        why = _compare(labels[i], ev, cv, refs[i] if i < len(refs) else None)
        if why:
            return Check(name, Verdict.MISCOMPILE, why, labels[i], ev, cv)
    return Check(name, Verdict.OK)


def differential(
    eager: EagerResult,
    compiled: EagerResult,
    input_names: Sequence[str],
    shadow: Callable[[], EagerResult | None] | None = None,
    no_grads: str | None = None,
) -> list[Check]:
    """Run the six checks of the module docstring, in order; return every outcome.

    ``shadow`` runs the program in fp64 on the same (upcast) inputs, called lazily at the
    first floating mismatch only; it may return None when the program cannot run in fp64.
    ``no_grads``, when given, says why gradients are not compared (the ``grads`` check
    passes with that message).
    """
    if eager.error is not None or compiled.error is not None:
        skipped = [Check(n, Verdict.OK, "skipped: an exception occurred") for n in CHECKS[:-1]]
        return [*skipped, _exceptions(eager.error, compiled.error)]
    cache: list[EagerResult | None] = []

    def refs(attr: str) -> _LazyRefs:
        return _LazyRefs(shadow, cache, attr)

    out_labels = [f"out{i}" for i in range(len(eager.outputs))]
    in_labels = [f"input {n}" for n in input_names]
    checks = [
        _values("values", "outputs", eager.outputs, compiled.outputs, refs("outputs"), out_labels),
        _values(
            "inputs",
            "inputs",
            eager.inputs_after,
            compiled.inputs_after,
            refs("inputs_after"),
            in_labels,
        ),
    ]
    # the inputs and the other outputs on each output's storage (the contract table in
    # oracle/README.md): two outputs eager returns as distinct memory must stay distinct
    ea, ca = eager.aliases, compiled.aliases
    bad = [k for k in ea if tuple(ea[k]) != tuple(ca.get(k, ()))]
    if bad:
        k = bad[0]
        what, got = _sharing(ea[k]), _sharing(ca.get(k, ()))
        checks.append(
            Check(
                "aliasing",
                Verdict.MISCOMPILE,
                f"{k} {what} in eager but {got} compiled",
                k,
                ea[k],
                ca.get(k, ()),
            )
        )
    else:
        checks.append(Check("aliasing", Verdict.OK))
    checks[0] = _through_aliasing(checks[0], checks[1], ea, ca)
    checks.append(_requires_grad(eager, compiled, out_labels, in_labels))
    checks.append(_grads(eager, compiled, input_names, refs("grads"), no_grads))
    checks.append(Check("exceptions", Verdict.OK))
    return checks


def _grads(eager: EagerResult, compiled: EagerResult, input_names: Sequence[str], refs: Any,
           no_grads: str | None) -> Check:
    """The ``grads`` check (module docstring, 5)."""
    if eager.grad_error is not None:
        return Check("grads", Verdict.OK, f"skipped: eager's backward raises "
                     f"{one_line(eager.grad_error)}: no reference gradient")
    if eager.grads is None:
        return Check("grads", Verdict.OK, "no gradients: no input requires grad, or no "
                     "floating output carries one")
    if no_grads is not None:
        return Check("grads", Verdict.OK, f"skipped: {no_grads}")
    if compiled.grad_error is not None:
        return Check("grads", Verdict.CRASH, f"compiled backward raises {one_line(compiled.grad_error)}; "
                     "eager's does not", "backward", None, one_line(compiled.grad_error))
    if compiled.grads is None:
        # a run that computed none: a stage snapshot of the blame cut (forward only), or
        # outputs cut from autograd, which the requires_grad check already reports
        return Check("grads", Verdict.OK, "skipped: the compiled side computed no gradients")
    labels = [f"grad of input {n}" for n in input_names]
    return _values("grads", "gradients", eager.grads, compiled.grads, refs, labels)


def _sharing(names: Sequence[str]) -> str:
    return f"aliases {', '.join(names)}" if names else "is fresh"


def _through_aliasing(values: Check, inputs: Check, ea: dict, ca: dict) -> Check:
    """``values`` with what else differs at the same output, when its storage does too.

    A ``values`` mismatch at ``out<k>`` whose storage sharing also differs (eager returns an
    input itself, F.dropout(x, training=False) for one, compiled a copy) is a difference of
    aliasing seen through values: a later in-place write to the shared storage shows in one
    output only. The message then says so, and whether every input agrees after the call,
    so that a report names the observable that differs (``_repro_words.effect``) instead
    of guessing it: ``out0: values differ ...; out0 aliases x in eager but is fresh
    compiled; every input agrees after the call``.
    """
    k = values.where
    if values.passed or k not in ea or tuple(ea[k]) == tuple(ca.get(k, ())):
        return values
    note = f"{k} {_sharing(ea[k])} in eager but {_sharing(ca.get(k, ()))} compiled"
    if inputs.passed:
        note += "; every input agrees after the call"
    return Check(values.name, values.verdict, f"{values.message}; {note}", k, values.eager,
                 values.compiled)


class _LazyRefs:
    """fp64 reference values, computed on first use (most runs never need them)."""

    def __init__(self, shadow, cache, attr):
        self._shadow, self._cache, self._attr = shadow, cache, attr

    def __len__(self) -> int:
        return 1 << 30

    def __getitem__(self, i: int) -> Any:
        if self._shadow is None:
            return None
        if not self._cache:
            try:
                self._cache.append(self._shadow())
            except Exception:  # the program may not run in fp64 (custom kernels, dtypes)
                self._cache.append(None)
        res = self._cache[0]
        vals = getattr(res, self._attr, ()) if res is not None and res.error is None else ()
        return vals[i] if i < len(vals) else None


def _requires_grad(eager: EagerResult, compiled: EagerResult, out_labels, in_labels) -> Check:
    pairs = list(zip(out_labels, eager.outputs, compiled.outputs, strict=False))
    pairs += list(zip(in_labels, eager.inputs_after, compiled.inputs_after, strict=False))
    for where, e, c in pairs:
        if (
            isinstance(e, torch.Tensor)
            and isinstance(c, torch.Tensor)
            and e.requires_grad != c.requires_grad
        ):
            return Check(
                "requires_grad",
                Verdict.MISCOMPILE,
                f"{where}: requires_grad={e.requires_grad} in eager, {c.requires_grad} compiled",
                where,
                e.requires_grad,
                c.requires_grad,
            )
    return Check("requires_grad", Verdict.OK)


def _exceptions(e: BaseException | None, c: BaseException | None) -> Check:
    name = one_line

    if e is not None and c is not None:
        return Check(
            "exceptions", Verdict.OK, f"both raise ({type(e).__name__} / {type(c).__name__})"
        )
    if c is not None:
        return Check(
            "exceptions",
            Verdict.CRASH,
            f"compiled raises {name(c)}; eager does not",
            "",
            None,
            name(c),
        )
    return Check(
        "exceptions",
        Verdict.INVALID_PROGRAM,
        f"eager raises {name(e)}; compiled does not",
        "",
        name(e),
        None,
    )

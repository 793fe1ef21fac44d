"""Custom ops registered through ``torch.library`` in the ``aliasfuzz`` namespace.

Each op's definition is a prelude (:mod:`aliasfuzz.fuzz.preludes`): one source text, run
once in-process and pasted verbatim into standalone repros. Their ``mutates_args`` make
Dynamo/AOTAutograd wrap them in ``auto_functionalized`` (v1) or ``auto_functionalized_v2``,
whose clones are what Inductor's reinplace pass decides on
(``torch/_inductor/fx_passes/reinplace.py``).

Generic rows (with ``gen``/``accepts``, usable by the generator): ``fz.add_one_``,
``fz.halve_`` (mutate their argument), ``fz.copy_into`` (writes an output argument from an
input), ``fz.bump_pair`` (mutates two arguments), ``fz.storage_layout`` and
``fz.strides_of`` (read layout as data: storage offset and storage length, significant
strides; tagged ``needs_exact_strides`` and ``observes_layout``, generated only where a
contract promises that layout: the ``layout-readout`` rule of
:mod:`aliasfuzz.fuzz.layout_contract`), ``fz.scaled`` (returns a fresh tensor). Case-specific rows (no ``gen``):
``fz.rotate_left_into`` (b01: its result depends on whether ``src`` aliases ``dst``),
``fz.sum_into`` (b09), ``fz.pack_flat_`` (b10, defined with ``torch.library.Library`` and a
``Tensor[]`` argument). Ops that only mutate return ``None``: their rows bind no name
(``n_out=0``), and ``custom_op`` derives their fake kernel from the schema.
"""

from __future__ import annotations

from collections.abc import Sequence

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import preludes
from aliasfuzz.fuzz.ops.core import OpDef, OpKind, ValueMeta, broadcast_shapes, fresh

__all__ = ["OPS"]

preludes.register(
    "fz_add_one_",
    """
@torch.library.custom_op("aliasfuzz::add_one_", mutates_args=("x",))
def fz_add_one_(x: torch.Tensor) -> None:
    x.add_(1)
""",
)

preludes.register(
    "fz_halve_",
    """
@torch.library.custom_op("aliasfuzz::halve_", mutates_args=("t",))
def fz_halve_(t: torch.Tensor) -> None:
    t.mul_(0.5)
""",
)

preludes.register(
    "fz_copy_into",
    """
@torch.library.custom_op("aliasfuzz::copy_into", mutates_args=("dst",))
def fz_copy_into(src: torch.Tensor, dst: torch.Tensor) -> None:
    dst.copy_(src)
""",
)

preludes.register(
    "fz_bump_pair",
    """
@torch.library.custom_op("aliasfuzz::bump_pair", mutates_args=("p", "q"))
def fz_bump_pair(p: torch.Tensor, q: torch.Tensor) -> None:
    p.add_(1)
    q.mul_(3)
""",
)

preludes.register(
    "fz_sum_into",
    """
@torch.library.custom_op("aliasfuzz::sum_into", mutates_args=("dst",))
def fz_sum_into(p0: torch.Tensor, q0: torch.Tensor, dst: torch.Tensor) -> None:
    dst.copy_(p0 + q0 + 0.5)
""",
)

preludes.register(
    "fz_rotate_left_into",
    """
@torch.library.custom_op("aliasfuzz::rotate_left_into", mutates_args=("dst",))
def fz_rotate_left_into(src: torch.Tensor, dst: torch.Tensor) -> None:
    # element by element on purpose: the result depends on whether src aliases dst
    n = src.shape[0]
    for i in range(n):
        dst[i] = src[(i + 1) % n]
""",
)

preludes.register(
    "fz_storage_layout",
    """
@torch.library.custom_op(
    "aliasfuzz::storage_layout", mutates_args=(), tags=(torch.Tag.needs_exact_strides,)
)
def fz_storage_layout(t: torch.Tensor) -> torch.Tensor:
    # what the op observes: its argument's storage offset and storage length (elements)
    return torch.tensor(
        [t.storage_offset(), t.untyped_storage().nbytes() // t.element_size()], device=t.device
    )


@fz_storage_layout.register_fake
def _(t):
    return torch.empty(2, dtype=torch.int64, device=t.device)
""",
)

preludes.register(
    "fz_strides_of",
    """
@torch.library.custom_op(
    "aliasfuzz::strides_of", mutates_args=(), tags=(torch.Tag.needs_exact_strides,)
)
def fz_strides_of(t: torch.Tensor) -> torch.Tensor:
    # what the op observes: its argument's significant strides (elements), one per dim;
    # a dim of size <= 1 (or an empty tensor) reports 0: that stride is never promised
    # (torch._prims_common.check_significant_strides, Inductor's significant_strides_equal)
    empty = t.numel() == 0
    strides = [0 if empty or n <= 1 else s for n, s in zip(t.shape, t.stride())]
    return torch.tensor(strides, dtype=torch.int64, device=t.device)


@fz_strides_of.register_fake
def _(t):
    return torch.empty(t.dim(), dtype=torch.int64, device=t.device)
""",
)

preludes.register(
    "fz_scaled",
    """
@torch.library.custom_op("aliasfuzz::scaled", mutates_args=())
def fz_scaled(x: torch.Tensor) -> torch.Tensor:
    # a fresh result with exactly the fake's strides (.contiguous() could keep odd
    # strides of size-1 dims); a custom op's output may not alias its input
    return torch.empty(x.shape, dtype=x.dtype, device=x.device).copy_(x * 2)


@fz_scaled.register_fake
def _(x):
    return torch.empty(x.shape, dtype=x.dtype, device=x.device)
""",
)

preludes.register(
    "fz_pack_flat_",
    """
_fz_pack_lib = torch.library.Library("aliasfuzz", "FRAGMENT")
_fz_pack_lib.define("pack_flat_(Tensor(a!) dst, Tensor[] parts) -> ()")


def _fz_pack_flat(dst, parts):
    flat = torch.cat([p.reshape(-1) for p in parts])
    dst.view(-1)[: flat.numel()].copy_(flat)


for _key in ("CPU", "CUDA"):
    torch.library.impl(_fz_pack_lib, "pack_flat_", _key)(_fz_pack_flat)
torch.library.impl(_fz_pack_lib, "pack_flat_", "Meta")(lambda dst, parts: None)
fz_pack_flat_ = torch.ops.aliasfuzz.pack_flat_
""",
)


# -- rules ---------------------------------------------------------------------------
def _mutating_none(metas, params, outs):
    return ()


def _not_bool(m: ValueMeta, what: str) -> None:
    if m.dtype == "bool":
        raise InvalidArgument(f"{what} does not take a bool tensor")


def _float_only(m: ValueMeta, what: str) -> None:
    if not m.is_float:
        raise InvalidArgument(f"{what} needs a floating tensor, got {m.dtype}")


def _add_one_infer(metas, params, outs):
    _not_bool(metas[0], "fz.add_one_")
    return ()


def _halve_infer(metas, params, outs):
    _float_only(metas[0], "fz.halve_")
    return ()


def _same_shape(metas: Sequence[ValueMeta], what: str) -> None:
    shapes = {m.shape for m in metas}
    if len(shapes) != 1:
        raise InvalidArgument(f"{what} needs equal shapes, got {[m.shape for m in metas]}")


def _copy_into_infer(metas, params, outs):
    # copy_ would broadcast; equal shapes keep the footprint rule trivially exact
    _same_shape(metas, "fz.copy_into")
    return ()


def _bump_pair_infer(metas, params, outs):
    for m in metas:
        _not_bool(m, "fz.bump_pair")
    return ()


def _sum_into_infer(metas, params, outs):
    p0, q0, dst = metas
    shape = broadcast_shapes(p0.shape, q0.shape)
    if broadcast_shapes(shape, dst.shape) != dst.shape:
        raise InvalidArgument(f"fz.sum_into: {shape} does not broadcast to dst {dst.shape}")
    _float_only(dst, "fz.sum_into dst")
    return ()


def _rotate_infer(metas, params, outs):
    _same_shape(metas, "fz.rotate_left_into")
    if metas[0].ndim == 0:
        raise InvalidArgument("fz.rotate_left_into needs tensors with at least one dim")
    return ()


def _layout_infer(metas, params, outs):
    return (fresh(outs[0], (2,), "int64"),)


def _strides_infer(metas, params, outs):
    return (fresh(outs[0], (metas[0].ndim,), "int64"),)


def _scaled_infer(metas, params, outs):
    _not_bool(metas[0], "fz.scaled")
    return (fresh(outs[0], metas[0].shape, metas[0].dtype),)


def _pack_infer(metas, params, outs):
    dst, parts = metas[0], metas[1:]
    if not dst.is_contiguous():
        raise InvalidArgument("fz.pack_flat_: dst must be contiguous (it is viewed as 1-d)")
    if any(p.dtype != dst.dtype for p in parts):
        raise InvalidArgument("fz.pack_flat_: parts must have dst's dtype")
    total = sum(p.numel for p in parts)
    if total > dst.numel:
        raise InvalidArgument(f"fz.pack_flat_: {total} elements do not fit dst ({dst.numel})")
    return ()


# -- generator hooks -------------------------------------------------------------------
def _no_params(draw, metas):
    return {}


def _accepts_not_bool(metas):
    return all(m.dtype != "bool" for m in metas)


def _accepts_disjoint_not_bool(metas):
    from aliasfuzz.fuzz.ops._inplacegen import disjoint

    return _accepts_not_bool(metas) and disjoint(metas)


def _accepts_float(metas):
    return all(m.is_float for m in metas)


def _accepts_same_shape(metas):
    return len({m.shape for m in metas}) == 1


def _row(op: str, arity, infer, doc: str, *, mutates=(), reads=None, generic=True, **kw) -> OpDef:
    """A custom-op row: ``fz.<op>`` renders ``torch.ops.aliasfuzz.<op>``, registered by the
    prelude ``fz_<op>`` (which ``apply`` calls, looked up at call time).

    Ops that mutate and return ``None`` bind no name (``n_out=0``); the others return one
    fresh tensor. ``generic`` rows get a ``gen`` (no parameters) so the generator uses them.
    """
    fn = "fz_" + op

    def apply(t, p):
        return getattr(preludes, fn)(*t)

    return OpDef(
        name="fz." + op,
        kind=OpKind.CUSTOM,
        arity=arity,
        infer=infer,
        apply=kw.pop("apply", apply),
        # Through torch.ops, not the Python wrapper: TorchScript resolves torch.ops names
        # (so the torchscript pipeline can run these programs), and Dynamo traces both alike.
        render=kw.pop("render", lambda e, p: f"torch.ops.aliasfuzz.{op}({', '.join(e)})"),
        mutates=mutates,
        reads=reads,
        n_out=0 if mutates else 1,
        prelude=(fn,),
        doc=doc,
        gen=_no_params if generic else None,
        **kw,
    )


_LAYOUT = frozenset({"observes_layout"})

OPS = [
    _row("add_one_", 1, _add_one_infer, "aliasfuzz::add_one_(Tensor(a!) x) -> (): x += 1 in place",
         mutates=(0,), accepts=_accepts_not_bool),
    _row("halve_", 1, _halve_infer,
         "aliasfuzz::halve_(Tensor(a!) t) -> (): t *= 0.5 in place (case b19)",
         mutates=(0,), accepts=_accepts_float),
    _row("copy_into", 2, _copy_into_infer,
         "aliasfuzz::copy_into(Tensor src, Tensor(a!) dst) -> (): dst.copy_(src)",
         mutates=(1,), reads=(0,), accepts=_accepts_same_shape),
    _row("bump_pair", 2, _bump_pair_infer,
         "aliasfuzz::bump_pair(Tensor(a!) p, Tensor(b!) q) -> (): p += 1; q *= 3 (case b09; "
         "p and q disjoint: sibling views of one base are fine)",
         mutates=(0, 1), accepts=_accepts_disjoint_not_bool),
    _row("storage_layout", 1, _layout_infer,
         "aliasfuzz::storage_layout(Tensor t) -> Tensor: int64 [storage_offset, storage "
         "numel] of t (case b05); observes layout: valid only on an unwritten program input "
         "or clone result (the layout-readout rule)", tags=_LAYOUT),
    _row("strides_of", 1, _strides_infer,
         "aliasfuzz::strides_of(Tensor t) -> Tensor: int64 significant strides of t, one "
         "per dim (0 for a dim of size <= 1); tagged needs_exact_strides, so Inductor owes "
         "it eager's strides; valid only where the layout-readout rule allows", tags=_LAYOUT),
    _row("scaled", 1, _scaled_infer,
         "aliasfuzz::scaled(Tensor x) -> Tensor: a fresh contiguous x * 2",
         accepts=_accepts_not_bool),
    _row("sum_into", 3, _sum_into_infer,
         "aliasfuzz::sum_into(Tensor p0, Tensor q0, Tensor(a!) dst) -> (): "
         "dst.copy_(p0 + q0 + 0.5) (case b09)", mutates=(2,), reads=(0, 1), generic=False),
    _row("rotate_left_into", 2, _rotate_infer,
         "aliasfuzz::rotate_left_into(Tensor src, Tensor(a!) dst) -> (): dst[i] = "
         "src[(i+1) % n], element by element (case b01; depends on src/dst aliasing)",
         mutates=(1,), reads=(0,), generic=False),
    _row("pack_flat_", (2, 9), _pack_infer,
         "aliasfuzz::pack_flat_(Tensor(a!) dst, Tensor[] parts) -> (): the flattened "
         "parts copied into the front of dst (case b10; torch.library.Library definition)",
         mutates=(0,), generic=False,
         apply=lambda t, p: preludes.fz_pack_flat_(t[0], list(t[1:])),
         render=lambda e, p: f"torch.ops.aliasfuzz.pack_flat_({e[0]}, [{', '.join(e[1:])}])"),
]

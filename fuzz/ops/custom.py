"""Custom ops registered through ``torch.library`` in the ``aliasfuzz`` namespace.

Each op's definition is a prelude (:mod:`aliasfuzz.fuzz.preludes`): one source text, run
once in-process and pasted verbatim into standalone repros. Their ``mutates_args`` make
Dynamo/AOTAutograd wrap them in ``auto_functionalized`` (v1) or ``auto_functionalized_v2``,
whose clones are what Inductor's reinplace pass decides on
(``torch/_inductor/fx_passes/reinplace.py``).

Generic rows (with ``gen``/``accepts``, usable by the generator): ``fz.add_one_``,
``fz.halve_`` (mutate their argument), ``fz.copy_into`` (writes an output argument from an
input), ``fz.bump_pair`` (mutates two arguments), ``fz.storage_layout`` and
``fz.strides_of`` (read storage metadata: offset and storage length, strides),
``fz.scaled`` (returns a fresh tensor). Case-specific rows (no ``gen``):
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
@torch.library.custom_op("aliasfuzz::storage_layout", mutates_args=())
def fz_storage_layout(t: torch.Tensor) -> torch.Tensor:
    # what the op observes: its argument's storage offset and storage length (elements)
    return torch.tensor([t.storage_offset(), t.untyped_storage().nbytes() // t.element_size()])


@fz_storage_layout.register_fake
def _(t):
    return torch.empty(2, dtype=torch.int64)
""",
)

preludes.register(
    "fz_strides_of",
    """
@torch.library.custom_op("aliasfuzz::strides_of", mutates_args=())
def fz_strides_of(t: torch.Tensor) -> torch.Tensor:
    # what the op observes: its argument's strides (elements), one per dim
    return torch.tensor(t.stride(), dtype=torch.int64)


@fz_strides_of.register_fake
def _(t):
    return torch.empty(t.dim(), dtype=torch.int64)
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


def _accepts_float(metas):
    return all(m.is_float for m in metas)


def _accepts_same_shape(metas):
    return len({m.shape for m in metas}) == 1


def _call(name: str):
    """Apply callable: look the prelude up at call time (registered objects live there)."""

    def apply(t, p):
        return getattr(preludes, name)(*t)

    return apply


def _render(name: str):
    return lambda e, p: f"{name}({', '.join(e)})"


OPS = [
    OpDef(
        name="fz.add_one_",
        kind=OpKind.CUSTOM,
        arity=1,
        infer=_add_one_infer,
        apply=_call("fz_add_one_"),
        render=_render("fz_add_one_"),
        mutates=(0,),
        n_out=0,
        prelude=("fz_add_one_",),
        doc="aliasfuzz::add_one_(Tensor(a!) x) -> (): x += 1 in place",
        gen=_no_params,
        accepts=_accepts_not_bool,
    ),
    OpDef(
        name="fz.halve_",
        kind=OpKind.CUSTOM,
        arity=1,
        infer=_halve_infer,
        apply=_call("fz_halve_"),
        render=_render("fz_halve_"),
        mutates=(0,),
        n_out=0,
        prelude=("fz_halve_",),
        doc="aliasfuzz::halve_(Tensor(a!) t) -> (): t *= 0.5 in place (case b19)",
        gen=_no_params,
        accepts=_accepts_float,
    ),
    OpDef(
        name="fz.copy_into",
        kind=OpKind.CUSTOM,
        arity=2,
        infer=_copy_into_infer,
        apply=_call("fz_copy_into"),
        render=_render("fz_copy_into"),
        mutates=(1,),
        reads=(0,),
        n_out=0,
        prelude=("fz_copy_into",),
        doc="aliasfuzz::copy_into(Tensor src, Tensor(a!) dst) -> (): dst.copy_(src)",
        gen=_no_params,
        accepts=_accepts_same_shape,
    ),
    OpDef(
        name="fz.bump_pair",
        kind=OpKind.CUSTOM,
        arity=2,
        infer=_bump_pair_infer,
        apply=_call("fz_bump_pair"),
        render=_render("fz_bump_pair"),
        mutates=(0, 1),
        n_out=0,
        prelude=("fz_bump_pair",),
        doc="aliasfuzz::bump_pair(Tensor(a!) p, Tensor(b!) q) -> (): p += 1; q *= 3 (case b09)",
        gen=_no_params,
        accepts=_accepts_not_bool,
    ),
    OpDef(
        name="fz.storage_layout",
        kind=OpKind.CUSTOM,
        arity=1,
        infer=_layout_infer,
        apply=_call("fz_storage_layout"),
        render=_render("fz_storage_layout"),
        prelude=("fz_storage_layout",),
        doc="aliasfuzz::storage_layout(Tensor t) -> Tensor: int64 [storage_offset, storage "
        "numel] of t (case b05); observes layout, which compiled code may legally change "
        "for views of intermediates",
        tags=frozenset({"observes_layout"}),
        gen=_no_params,
    ),
    OpDef(
        name="fz.strides_of",
        kind=OpKind.CUSTOM,
        arity=1,
        infer=_strides_infer,
        apply=_call("fz_strides_of"),
        render=_render("fz_strides_of"),
        prelude=("fz_strides_of",),
        doc="aliasfuzz::strides_of(Tensor t) -> Tensor: int64 strides of t, one per dim; "
        "observes layout (custom ops get fixed stride order by default, so compiled code "
        "must pass eager's strides)",
        tags=frozenset({"observes_layout"}),
        gen=_no_params,
    ),
    OpDef(
        name="fz.scaled",
        kind=OpKind.CUSTOM,
        arity=1,
        infer=_scaled_infer,
        apply=_call("fz_scaled"),
        render=_render("fz_scaled"),
        prelude=("fz_scaled",),
        doc="aliasfuzz::scaled(Tensor x) -> Tensor: a fresh contiguous x * 2",
        gen=_no_params,
        accepts=_accepts_not_bool,
    ),
    OpDef(
        name="fz.sum_into",
        kind=OpKind.CUSTOM,
        arity=3,
        infer=_sum_into_infer,
        apply=_call("fz_sum_into"),
        render=_render("fz_sum_into"),
        mutates=(2,),
        reads=(0, 1),
        n_out=0,
        prelude=("fz_sum_into",),
        doc="aliasfuzz::sum_into(Tensor p0, Tensor q0, Tensor(a!) dst) -> (): "
        "dst.copy_(p0 + q0 + 0.5) (case b09)",
    ),
    OpDef(
        name="fz.rotate_left_into",
        kind=OpKind.CUSTOM,
        arity=2,
        infer=_rotate_infer,
        apply=_call("fz_rotate_left_into"),
        render=_render("fz_rotate_left_into"),
        mutates=(1,),
        reads=(0,),
        n_out=0,
        prelude=("fz_rotate_left_into",),
        doc="aliasfuzz::rotate_left_into(Tensor src, Tensor(a!) dst) -> (): dst[i] = "
        "src[(i+1) % n], element by element (case b01; depends on src/dst aliasing)",
    ),
    OpDef(
        name="fz.pack_flat_",
        kind=OpKind.CUSTOM,
        arity=(2, 9),
        infer=_pack_infer,
        apply=lambda t, p: preludes.fz_pack_flat_(t[0], list(t[1:])),
        render=lambda e, p: f"fz_pack_flat_({e[0]}, [{', '.join(e[1:])}])",
        mutates=(0,),
        reads=None,
        n_out=0,
        prelude=("fz_pack_flat_",),
        doc="aliasfuzz::pack_flat_(Tensor(a!) dst, Tensor[] parts) -> (): the flattened "
        "parts copied into the front of dst (case b10; torch.library.Library definition)",
    ),
]

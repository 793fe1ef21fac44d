"""The op registry against PyTorch: every row's rule, rendering, footprint and generator.

For each row: ``infer`` gives exactly the size, stride, storage offset, dtype and storage
(shared with which input, or fresh with which byte size) that eager PyTorch gives on real
tensors, over seeded random argument layouts (non-contiguous, offset, expanded, aliased);
``render`` and ``apply`` compute the same values; an op changes no byte outside what the
row says it writes; ``gen`` only draws parameters that ``infer`` and eager accept; and a
few calls PyTorch rejects are rejected by ``infer`` too.
"""

from __future__ import annotations

import random

import pytest
import torch

from aliasfuzz.errors import GenerationFailure
from aliasfuzz.fuzz.eager import interpret, make_inputs, run_eager
from aliasfuzz.fuzz.ir import DTYPES, Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops import REGISTRY, lookup
from aliasfuzz.fuzz.validate import infer

MINE = ("views", "functional", "inplace", "outs")  # registry modules this file covers
OURS = sorted(n for n, d in REGISTRY.items() if d.apply.__module__.rsplit(".", 1)[-1] in MINE)
GENERATED = [n for n in OURS if REGISTRY[n].gen is not None]
_FLOAT = ("float32", "float64", "float16", "bfloat16")


class RandomDraw:
    """The Draw protocol over ``random.Random`` (what the Hypothesis adapter does, seeded)."""

    def __init__(self, rng: random.Random):
        self.rng = rng

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)

    def boolean(self, p=0.5):
        return self.rng.random() < p

    def choice(self, options):
        return self.rng.choice(list(options))

    def scalar(self, dtype):
        if dtype == "bool":
            return self.rng.random() < 0.5
        if dtype in _FLOAT:
            return self.rng.choice([0.5, -1.5, 2.0, 3.25])
        return self.rng.randint(-3, 3) if dtype != "uint8" else self.rng.randint(0, 3)


def _layout(rng: random.Random, shape: tuple[int, ...]):
    """A random strided layout for ``shape``: permuted, stepped, offset, maybe expanded."""
    nd = len(shape)
    perm = list(range(nd))
    if rng.random() < 0.5:
        rng.shuffle(perm)
    steps = [rng.choice([1, 1, 2]) for _ in range(nd)]
    stride = [0] * nd
    acc = 1
    for d in reversed(perm):
        stride[d] = acc * steps[d]
        acc *= max(shape[d], 1) * steps[d]
    for d in range(nd):
        if shape[d] == 1 and rng.random() < 0.3:
            stride[d] = rng.randint(0, 7)  # size-1 dims: any stride
        elif rng.random() < 0.08:
            stride[d] = 0  # expanded
    offset = rng.choice([0, 0, 1, 3])
    return tuple(stride), offset


def _spec(rng, name, storage, shape, dtype):
    stride, offset = _layout(rng, shape)
    t = TensorSpec(name, storage, shape, stride, offset)
    numel = max(t.span, 1) + rng.choice([0, 0, 2])
    init = "randint" if dtype not in _FLOAT else "randn"
    return StorageSpec(storage, numel, dtype, init, {"seed": rng.randint(0, 99)}), t


def _related_shapes(rng, n):
    base = tuple(rng.choice([1, 2, 3, 4]) for _ in range(rng.randint(0, 3)))
    out = []
    for _ in range(n):
        s = base[rng.randint(0, len(base)) if rng.random() < 0.2 else 0 :]
        out.append(tuple(1 if rng.random() < 0.15 else k for k in s))
    return out


def random_args(rng, arity, dtypes=None):
    """Storages and input specs for ``arity`` tensor arguments of related shapes."""
    lo, hi = (arity, arity) if isinstance(arity, int) else arity
    n = rng.randint(lo, min(hi, lo + 2))
    shapes = _related_shapes(rng, n)
    dt = rng.choice(list(DTYPES))
    storages, specs = [], []
    for i, shape in enumerate(shapes):
        d = dtypes[i] if dtypes else (dt if rng.random() < 0.7 else rng.choice(list(DTYPES)))
        st, t = _spec(rng, f"a{i}", f"s{i}", shape, d)
        storages.append(st)
        specs.append(t)
    return storages, specs


def _flat(t: torch.Tensor) -> torch.Tensor:
    n = t.untyped_storage().nbytes()
    return torch.empty(0, dtype=torch.uint8).set_(t.untyped_storage(), 0, (n,), (1,))


def _same(a, b) -> bool:
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.is_floating_point:
        return torch.equal(torch.nan_to_num(a.double(), 7.0, 8.0, 9.0), torch.nan_to_num(b.double(), 7.0, 8.0, 9.0))
    return torch.equal(a, b)


def check_exact(program: Program) -> None:
    """Assert the registry's rule, footprint and rendering of one statement against eager."""
    typed = infer(program)
    step = typed.steps[0]
    inputs = make_inputs(program)
    by_storage = {t.storage: x for t, x in zip(program.inputs, inputs, strict=False)}
    before = {s: _flat(x).clone() for s, x in by_storage.items()}
    results = interpret(program, inputs)
    for name, got in zip(program.outputs, results, strict=False):
        meta = typed.values[name]
        where = f"{step.op.op} {dict(step.op.params)} -> {name}"
        assert isinstance(got, torch.Tensor), where
        assert (tuple(got.shape), got.stride(), got.storage_offset()) == (
            meta.shape, meta.stride, meta.offset
        ), where
        assert str(got.dtype).removeprefix("torch.") == meta.dtype, where
        ptr = got.untyped_storage().data_ptr()
        shared = [s for s, x in by_storage.items() if x.untyped_storage().data_ptr() == ptr and got.numel()]
        if meta.storage in by_storage:
            assert not got.numel() or shared == [meta.storage], where
        else:
            assert not shared, where
            assert got.untyped_storage().nbytes() == meta.storage_nbytes, where
    # Bytes changed by the op lie inside its written footprint.
    written = step.opdef.written(step.args, step.op.params)
    for s, x in by_storage.items():
        changed = set((before[s] != _flat(x)).nonzero().flatten().tolist())
        allowed = set().union(*(w.byte_footprint() for w in written if w.storage == s))
        assert changed <= allowed, f"{step.op.op} wrote outside its footprint on {s}"
    # The rendered source computes what the registry's apply computes.
    ran = run_eager(program)
    assert ran.error is None, ran.error
    for a, b in zip(ran.outputs, results, strict=False):
        assert _same(a, b), step.op.op
    for a, b in zip(ran.inputs_after, inputs, strict=False):
        assert _same(a, b), f"{step.op.op}: inputs after the call differ"


def _gen_program(name, rng):
    d = lookup(name)
    storages, specs = random_args(rng, d.arity)
    metas = [infer(Program(storages, specs, ())).values[t.name] for t in specs]
    if d.accepts is not None and not d.accepts(metas):
        return None
    try:
        params = d.gen(RandomDraw(rng), metas)
    except GenerationFailure:
        return None
    n_out = d.n_out if d.n_out is not None else d.count_out(metas, params)
    outs = tuple(f"r{i}" for i in range(n_out))
    body = (Op(name, [t.name for t in specs], params, outs),)
    return Program(tuple(storages), tuple(specs), body, outs)


@pytest.mark.parametrize("name", GENERATED)
def test_generated_calls_are_exact(name):
    """gen draws valid parameters, and infer/footprint/render agree with eager on them."""
    rng = random.Random(f"registry-{name}")
    checked = 0
    for _ in range(40 * int(__import__("os").environ.get("AF_N", 25)) // 2):
        program = _gen_program(name, rng)
        if program is None:
            continue
        check_exact(program)
        checked += 1
        if checked == int(__import__("os").environ.get("AF_N", 25)):
            break
    assert checked >= 5, f"{name}: only {checked} argument tuples accepted"

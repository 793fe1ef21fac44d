"""The fp64 shadow computes eager's semantics: on random non-dense float programs, the shadow
run equals the same program built directly on float64 storages (same layouts, same values).

The reference is independent of the shadow's own input code: each float32 storage of the
program becomes a float64 ``StorageSpec`` holding the same values, and
:func:`~aliasfuzz.fuzz.eager.make_inputs` builds its inputs with ``torch.as_strided`` as for
any program. The shadow (``oracle.judge._shadow``) builds its inputs from the float32
program's inputs by upcasting whole storages (``differential.shadow_inputs``). Both run the
same rendered function; outputs, inputs after the call (bits, sizes, strides, offsets) and
aliasing must be identical. With the old ``.to(torch.float64)`` shadow, strided inputs
became contiguous and layout-reading programs (c01, PyTorch #133512) differed.
"""

from __future__ import annotations

import pytest
from hypothesis import assume, example, given, settings

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import _build_storage, make_inputs, run_callable
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from aliasfuzz.fuzz.render import load_function
from aliasfuzz.fuzz.strategies import programs
from aliasfuzz.oracle.judge import _shadow
from tests.common import assert_same

_FAMILIES = ("view", "functional", "inplace", "out", "scatter", "custom")

# c01's pattern (PyTorch #133512): a stride-3 input doubled in place, read back through
# as_strided with explicit strides, which walks the input's own layout.
_C01 = Program(
    (StorageSpec("s0", 12),),
    (TensorSpec("x0", "s0", (4,), (3,), 0),),
    (
        Op("mul_.Scalar", ("x0",), {"other": 2.0}, ("v0",)),
        Op("as_strided", ("v0",), {"size": [2], "stride": [3]}, ("v1",)),
        Op("clone", ("v1",), {}, ("v2",)),
    ),
    ("v2",),
)


def _non_dense(p: Program) -> bool:
    specs = [t for t in p.inputs if not t.none]
    shared = len({t.storage for t in specs}) < len(specs)
    return shared or any(
        t.offset != 0 or t.stride != contiguous_strides(t.shape) for t in specs
    )


def _as_float64(p: Program) -> Program:
    """``p`` with every float32 storage replaced by a float64 one holding the same values."""
    storages = tuple(
        StorageSpec(s.name, s.numel, "float64", "values",
                    {"data": [float(v) for v in _build_storage(s).tolist()]})
        if s.dtype == "float32"
        else s
        for s in p.storages
    )
    return Program(storages, p.inputs, p.body, p.outputs, dict(p.meta))


def check_shadow(p: Program) -> None:
    p64 = _as_float64(p)
    try:
        p64.validate()
    except InvalidArgument:
        assume(False)  # an op whose rule depends on float32 (rare): not this property
    fn, _ = load_function(p)
    names = [t.name for t in p.inputs]
    ref = run_callable(fn, p64, make_inputs(p64))
    got = _shadow(fn, names, lambda: make_inputs(p))()
    assert got is not None
    assert (ref.error is None) == (got.error is None), (ref.error, got.error)
    if ref.error is not None:
        return
    assert_same(got.outputs, ref.outputs, "shadow output")
    assert_same(got.inputs_after, ref.inputs_after, "shadow input after the call")
    assert got.aliases == ref.aliases


@settings(max_examples=60)
@given(programs(families=_FAMILIES, dtypes=("float32",), max_statements=6))
@example(_C01)
def test_shadow_run_equals_the_float64_program_on_the_same_layouts(p):
    assume(_non_dense(p))
    check_shadow(p)


@pytest.mark.fuzz
@settings(max_examples=1000)
@given(programs(families=_FAMILIES, dtypes=("float32",), max_statements=8))
def test_shadow_run_equals_the_float64_program_many(p):
    assume(_non_dense(p))
    check_shadow(p)

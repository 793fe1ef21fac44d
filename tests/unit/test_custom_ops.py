"""Custom-op, Triton-launch, factory and control-flow rows: semantics, rules, tracing.

Each row's ``apply`` is checked against plain torch code, its ``infer`` against what torch
does (shapes, rejections), mutating custom ops against ``torch.compile(aot_eager)`` (their
fake kernels and functionalization), and the control rows against TorchScript.
"""

from __future__ import annotations

import pytest
import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz import preludes
from aliasfuzz.fuzz.eager import interpret, make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from aliasfuzz.fuzz.ops import REGISTRY, OpKind, lookup
from aliasfuzz.fuzz.ops.kernels import eval_expr, render_expr
from aliasfuzz.fuzz.render import render_function_lines, render_module
from aliasfuzz.fuzz.validate import infer
from tests.common import assert_same


def _prog(inputs, body, outputs=(), dtype="float32", numel=None):
    """A program whose inputs are fresh arange tensors of the given shapes."""
    storages, specs = [], []
    for name, shape in inputs:
        n = 1
        for s in shape:
            n *= s
        storages.append(StorageSpec(f"s_{name}", n, dtype=dtype, init_args={"start": 1}))
        specs.append(TensorSpec(name, f"s_{name}", tuple(shape), contiguous_strides(shape)))
    return Program(tuple(storages), tuple(specs), tuple(body), tuple(outputs))


def _run_both(p: Program):
    """Rendered eager run and interpreter run on the same fresh inputs; they must agree."""
    got = run_eager(p)
    assert got.error is None, repr(got.error)
    inputs = make_inputs(p)
    outs = interpret(p, inputs)
    assert_same(outs, got.outputs, "interpreted output")
    assert_same(inputs, got.inputs_after, "interpreted input after")
    return got


# -- custom ops: semantics -----------------------------------------------------------
def test_copy_into_writes_dst_from_src():
    p = _prog([("a", (2, 3)), ("b", (2, 3))], [Op("fz.copy_into", ("a", "b"))], ["b"])
    r = _run_both(p)
    a0 = torch.arange(1.0, 7.0).reshape(2, 3)
    assert_same(r.inputs_after, (a0, a0))
    assert r.aliases == {"out0": ("b",)}


def test_bump_pair_mutates_both_arguments():
    p = _prog(
        [("x", (2, 3))],
        [
            Op("index", ("x",), {"idx": [0]}, ("r0",)),
            Op("index", ("x",), {"idx": [1]}, ("r1",)),
            Op("fz.bump_pair", ("r0", "r1")),
        ],
    )
    r = _run_both(p)
    want = torch.tensor([[2.0, 3.0, 4.0], [12.0, 15.0, 18.0]])
    assert_same(r.inputs_after, (want,))


def test_add_one_and_halve_mutate_in_place():
    p = _prog([("x", (4,))], [Op("fz.add_one_", ("x",)), Op("fz.halve_", ("x",))])
    r = _run_both(p)
    assert_same(r.inputs_after, ((torch.arange(1.0, 5.0) + 1) * 0.5,))


def test_storage_layout_reports_offset_and_storage_length():
    p = _prog(
        [("x", (10,))],
        [
            Op("index", ("x",), {"idx": [[3, None, None]]}, ("t",)),
            Op("fz.storage_layout", ("t",), {}, ("l",)),
            Op("clone", ("t",), {}, ("c",)),
            Op("fz.storage_layout", ("c",), {}, ("lc",)),
        ],
        ["l", "lc"],
    )
    r = _run_both(p)
    assert_same(r.outputs, (torch.tensor([3, 10]), torch.tensor([0, 7])))


def test_strides_of_reports_the_argument_strides():
    p = _prog(
        [("x", (3, 4))],
        [
            Op("transpose", ("x",), {"dim0": 0, "dim1": 1}, ("t",)),
            Op("fz.strides_of", ("t",), {}, ("s",)),
            Op("index", ("x",), {"idx": [1, 2]}, ("e",)),
            Op("fz.strides_of", ("e",), {}, ("s0",)),
        ],
        ["s", "s0"],
    )
    r = _run_both(p)
    assert_same(r.outputs, (torch.tensor([1, 4]), torch.zeros(0, dtype=torch.int64)))


def test_scaled_returns_fresh_storage():
    p = _prog([("x", (3,))], [Op("fz.scaled", ("x",), {}, ("y",))], ["y"], dtype="int64")
    r = _run_both(p)
    assert_same(r.outputs, (torch.tensor([2, 4, 6]),))
    assert r.aliases == {"out0": ()}


def test_scaled_result_has_the_layout_its_rule_gives():
    # an input "contiguous" up to a size-1 dim's stride: .contiguous() would keep (1, 2)
    p = Program(
        (StorageSpec("s", 4),),
        (TensorSpec("x", "s", (2, 1), (1, 2)),),
        (Op("fz.scaled", ("x",), {}, ("y",)),),
        ("y",),
    )
    (y,) = _run_both(p).outputs
    assert y.stride() == infer(p).values["y"].stride == (1, 1)


def test_rotate_left_into_reads_through_an_alias_element_by_element():
    # src is dst itself: element 0 is overwritten before the last read (case b01's eager
    # result when the clone is dropped)
    p = _prog([("x", (4,))], [Op("fz.rotate_left_into", ("x", "x"))])
    r = _run_both(p)
    assert_same(r.inputs_after, (torch.tensor([2.0, 3.0, 4.0, 2.0]),))


def test_pack_flat_fills_the_front_of_dst():
    p = _prog(
        [("a", (2,)), ("b", (3,))],
        [Op("zeros", (), {"shape": [2, 3]}, ("buf",)), Op("fz.pack_flat_", ("buf", "a", "b"))],
        ["buf"],
    )
    r = _run_both(p)
    assert_same(r.outputs, (torch.tensor([[1.0, 2.0, 1.0], [2.0, 3.0, 0.0]]),))
    assert "torch.ops.aliasfuzz.pack_flat_(buf, [a, b])" in render_module(p).source


@pytest.mark.parametrize(
    "body, message",
    [
        ([Op("fz.copy_into", ("a", "b"))], "equal shapes"),
        ([Op("fz.halve_", ("i",))], "floating"),
        ([Op("fz.pack_flat_", ("a", "b", "b"))], "do not fit"),
        ([Op("fz.add_one_", ("a",), {}, ("y",))], "binds 1 names"),
        ([Op("fz.sum_into", ("a", "a", "b"))], "broadcast"),
    ],
)
def test_custom_rules_reject_what_torch_rejects(body, message):
    p = Program(
        (StorageSpec("s", 20), StorageSpec("si", 4, dtype="int64")),
        (
            TensorSpec("a", "s", (4,), (1,)),
            TensorSpec("b", "s", (2, 3), (3, 1), 4),
            TensorSpec("i", "si", (4,), (1,)),
        ),
        tuple(body),
    )
    with pytest.raises(InvalidArgument, match=message):
        infer(p)


def _mutating_fn(name):
    ops = {
        "fz.add_one_": lambda x, y: preludes.fz_add_one_(x[1]),
        "fz.halve_": lambda x, y: preludes.fz_halve_(x.t()[0]),
        "fz.copy_into": lambda x, y: preludes.fz_copy_into(y.sin(), x),
        "fz.bump_pair": lambda x, y: preludes.fz_bump_pair(x[0], y),
        "fz.sum_into": lambda x, y: preludes.fz_sum_into(x[0], y[1], x[1]),
        "fz.rotate_left_into": lambda x, y: preludes.fz_rotate_left_into(x.clone(), x),
        "fz.pack_flat_": lambda x, y: preludes.fz_pack_flat_(x, [y[0], y[1, :1]]),
    }[name]

    def f(x, y):
        t = x * 1
        ops(t, y)
        ops(x, y)
        return t + 1, preludes.fz_scaled(t), preludes.fz_storage_layout(t)

    return f


@pytest.mark.parametrize(
    "name",
    [
        "fz.add_one_",
        "fz.halve_",
        "fz.copy_into",
        "fz.bump_pair",
        "fz.sum_into",
        "fz.rotate_left_into",
        "fz.pack_flat_",
    ],
)
def test_custom_ops_trace_under_aot_eager_like_eager(name):
    # fake kernels, auto_functionalized wrapping and the input-mutation epilogue
    f = _mutating_fn(name)
    x0, y0 = torch.arange(6.0).reshape(2, 3), torch.arange(6.0).reshape(2, 3) - 2
    xe, ye, xc, yc = x0.clone(), y0.clone(), x0.clone(), y0.clone()
    want = f(xe, ye)
    torch._dynamo.reset()
    got = torch.compile(f, backend="aot_eager", fullgraph=True)(xc, yc)
    torch._dynamo.reset()
    assert_same(got, want)
    assert_same((xc, yc), (xe, ye), "input after")


def test_generic_custom_rows_have_generator_hooks():
    generic = [
        "fz.add_one_",
        "fz.halve_",
        "fz.copy_into",
        "fz.bump_pair",
        "fz.storage_layout",
        "fz.strides_of",
        "fz.scaled",
    ]
    for name in generic:
        assert lookup(name).gen is not None, name
    for name in ["fz.rotate_left_into", "fz.sum_into", "fz.pack_flat_"]:
        assert lookup(name).gen is None, name
    for d in REGISTRY.values():
        if d.kind is OpKind.CUSTOM:
            assert d.prelude and all(n in preludes.SOURCES for n in d.prelude)


# -- Triton launches -------------------------------------------------------------------
def test_launch_expressions_evaluate_and_render():
    layouts = [((3, 2), (1, 3)), ((8,), (1,))]
    assert eval_expr("numel(0)", layouts) == 6
    assert eval_expr("size(0, 1)", layouts) == 2
    assert eval_expr("stride(0,1)", layouts) == 3
    assert eval_expr("cdiv(numel(1), 3)", layouts) == 3
    assert eval_expr(5, layouts) == 5
    assert render_expr("cdiv(numel(0), 16)", ["z"]) == "((z.numel()) + 15) // 16"
    assert render_expr("stride(0, 0)", ["rows"]) == "rows.stride(0)"
    for bad in ["numel(2)", "size(0)", "len(0)", True, "cdiv(numel(0), 0)"]:
        with pytest.raises(InvalidArgument):
            eval_expr(bad, layouts)


def test_flat_add_kernel_writes_out():
    p = _prog(
        [("a", (2, 5)), ("b", (2, 5))],
        [
            Op("empty_like", ("a",), {}, ("out",)),
            Op(
                "tk.flat_add",
                ("a", "b", "out"),
                {"grid": ["cdiv(numel(0), 4)"], "BLOCK": 4, "n": "numel(0)"},
            ),
        ],
        ["out"],
    )
    infer(p)
    outs = interpret(p, make_inputs(p))
    a = torch.arange(1.0, 11.0).reshape(2, 5)
    assert_same(outs, (a + a,))
    assert "fz_flat_add[(((a.numel()) + 3) // 4,)](a, b, out, a.numel(), BLOCK=4)" in (
        render_module(p).source
    )


def test_scale_kernel_in_place_and_same_tensor_twice():
    p = _prog(
        [("x", (8,))],
        [
            Op("tk.scale_", ("x",), {"grid": [2], "BLOCK": 4, "n": 6, "alpha": 0.5}),
            Op("tk.scale_then_shift", ("x", "x"), {"grid": [1], "BLOCK": 8}),
        ],
    )
    infer(p)
    inputs = make_inputs(p)
    interpret(p, inputs)
    x = torch.arange(1.0, 9.0)
    x[:6] *= 0.5
    assert_same(inputs, (x * 10 + 1,))


def test_double_kept_rows_kernel_writes_only_kept_rows_of_an_offset_view():
    p = Program(
        (
            StorageSpec("s", 12),
            StorageSpec("k", 3, dtype="int32", init="values", init_args={"data": [0, 1, 1]}),
        ),
        (TensorSpec("x", "s", (3, 4), (4, 1)), TensorSpec("keep", "k", (3,), (1,))),
        (
            Op("index", ("x",), {"idx": [[1, None, None]]}, ("rows",)),
            Op(
                "tk.double_kept_rows",
                ("rows", "keep"),
                {
                    "grid": ["size(0, 0)"],
                    "BLOCK": 4,
                    "ncols": "size(0, 1)",
                    "row_stride": "stride(0, 0)",
                },
            ),
        ),
    )
    infer(p)
    inputs = make_inputs(p)
    interpret(p, inputs)
    want = torch.arange(12.0).reshape(3, 4)
    want[2] *= 2  # rows[1] is x[2]; rows[0] (keep 0) is skipped
    assert_same(inputs[:1], (want,))


@pytest.mark.parametrize(
    "params, message",
    [
        ({"grid": [1], "BLOCK": 6, "n": 4}, "power of two"),
        ({"grid": [1], "BLOCK": 4, "n": 99}, "reads 99"),
        ({"grid": [1], "BLOCK": 2, "n": 4}, "does not cover"),
        ({"grid": [], "BLOCK": 4, "n": 4}, "grid"),
        ({"grid": [1], "BLOCK": 4, "n": 4, "m": 1}, "unknown launch"),
    ],
)
def test_launch_rules_reject_bad_launches(params, message):
    p = _prog([("a", (4,)), ("b", (4,)), ("c", (4,))], [Op("tk.flat_add", ("a", "b", "c"), params)])
    with pytest.raises(InvalidArgument, match=message):
        infer(p)


# -- factories and control flow --------------------------------------------------------
def test_factories_render_like_the_cases():
    p = _prog(
        [("x", (2,))],
        [
            Op("zeros", (), {"shape": [1]}, ("z",)),
            Op("full", (), {"shape": [2, 6], "value": 1.0}, ("f",)),
            Op("full", (), {"shape": [3], "value": 7, "dtype": "int64"}, ("g",)),
        ],
        ["z", "f", "g"],
    )
    src = render_module(p).source
    assert "z = torch.zeros([1])" in src and "f = torch.full([2, 6], 1.0)" in src
    assert "g = torch.full([3], 7, dtype=torch.int64)" in src
    with_device = p.with_body((Op("zeros", ("x",), {"shape": [2]}, ("z",)),), ("z",))
    assert "z = torch.zeros([2], device=x.device)" in render_module(with_device).source
    assert _run_both(with_device).aliases == {"out0": ()}
    r = _run_both(p)
    assert_same(r.outputs, (torch.zeros(1), torch.ones(2, 6), torch.full((3,), 7)))
    with pytest.raises(InvalidArgument, match="float value"):
        infer(_prog([], [Op("full", (), {"shape": [1], "value": 0.5, "dtype": "int64"}, ("h",))]))


@pytest.mark.parametrize("start, expect", [(1, [6, 7, 8]), (11, [11, 12, 13])])
def test_branch_takes_the_data_dependent_path(start, expect):
    p = Program(
        (StorageSpec("s", 3, dtype="int64", init_args={"start": start}),),
        (TensorSpec("x", "s", (3,), (1,)),),
        (
            Op("clone", ("x",), {}, ("c",)),
            Op("if_lt_add_", ("c",), {"index": [0], "bound": 10, "other": 5}),
        ),
        ("c",),
    )
    r = _run_both(p)
    assert_same(r.outputs, (torch.tensor(expect),))
    torch._dynamo.reset()
    fn, _ = __import__("aliasfuzz.fuzz.render", fromlist=["load_function"]).load_function(p)
    got = torch.compile(fn, backend="eager")(*make_inputs(p))  # a graph break, not an error
    torch._dynamo.reset()
    assert_same(got, r.outputs)


def _script_program():
    return Program(
        (StorageSpec("vs", 5, init_args={"start": 1}),),
        (TensorSpec("v", "vs", (5,), (1,)),),
        (
            Op("zeros", (), {"shape": [1]}, ("p",)),
            Op("zeros", (), {"shape": [1]}, ("q",)),
            Op("zeros", (), {"shape": [1]}, ("r",)),
            Op("zeros", (), {"shape": [5]}, ("seen",)),
            Op("loop_rotate3_accumulate", ("p", "q", "r", "v", "seen")),
            Op("clone", ("seen",), {}, ("c",)),
            Op("if_lt_add_", ("c",), {"index": [1], "bound": 100, "other": 1.5}),
        ),
        ("seen", "c", "p", "q", "r"),
    )


def test_loop_rotates_three_buffers():
    r = _run_both(_script_program())
    # buffer k%3 accumulates v[k]: p gets v0+v3, q gets v1+v4, r gets v2
    seen = torch.tensor([1.0, 2.0, 3.0, 5.0, 7.0])
    # the names p, q, r keep their buffers after the loop (only loop-local names rotate)
    pqr = (torch.tensor([3.0]), torch.tensor([7.0]), torch.tensor([5.0]))
    assert_same(r.outputs, (seen, seen + 1.5, *pqr))  # seen[1] < 100: c += 1.5


def test_control_rows_are_valid_torchscript():
    p = _script_program()
    assert all(lookup(op.op).scriptable for op in p.body)
    fn = torch.jit.CompilationUnit("\n".join(render_function_lines(p)) + "\n").program
    with torch.jit.optimized_execution(False):
        got = fn(*make_inputs(p))
    assert_same(got, run_eager(p).outputs)


def test_control_rows_reject_bad_arguments():
    bad = _prog([("x", (2, 2))], [Op("if_lt_add_", ("x",), {"index": [0], "bound": 1, "other": 1})])
    with pytest.raises(InvalidArgument, match="one position per dim"):
        infer(bad)
    bad = _prog(
        [("p", (2,)), ("v", (3,)), ("s", (2,))],
        [Op("loop_rotate3_accumulate", ("p", "p", "p", "v", "s"))],
    )
    with pytest.raises(InvalidArgument, match="len\\(seen\\)"):
        infer(bad)


class _Draw:
    """A seeded implementation of the Draw protocol (fuzz/ops/core.py) for gen hooks."""

    def __init__(self, seed: int):
        import random

        self.r = random.Random(seed)

    def integer(self, lo, hi):
        return self.r.randint(lo, hi)

    def boolean(self, p=0.5):
        return self.r.random() < p

    def choice(self, options):
        return self.r.choice(list(options))

    def scalar(self, dtype):
        if dtype == "bool":
            return self.boolean()
        if dtype.startswith(("int", "uint")):
            return self.r.randint(0, 5)
        return self.r.choice([0.5, -1.0, 2.0, 3.25])


@pytest.mark.parametrize("name", ["zeros", "full", "if_lt_add_"])
def test_gen_hooks_draw_parameters_the_rules_accept(name):
    d = lookup(name)
    ran = 0
    for seed in range(30):
        draw = _Draw(seed)
        inputs, dtype = [], "float32"
        if d.arity:
            inputs = [("x", [draw.integer(1, 3) for _ in range(draw.integer(0, 2))])]
            dtype = draw.choice(["float32", "int64"])
        metas = tuple(infer(_prog(inputs, [], dtype=dtype)).values.values())
        if d.accepts is not None and not d.accepts(metas):
            continue
        params = d.gen(draw, metas)
        outs = ("y",) if d.n_out else ()
        _run_both(_prog(inputs, [Op(name, ("x",) if d.arity else (), params, outs)], dtype=dtype))
        ran += 1
    assert ran >= 20


def test_launch_footprints_are_what_the_kernels_touch():
    p = Program(
        (StorageSpec("s", 24), StorageSpec("k", 4, dtype="int32")),
        (TensorSpec("x", "s", (4, 6), (6, 1)), TensorSpec("keep", "k", (4,), (1,))),
        (
            Op("tk.scale_", ("x",), {"grid": [1], "BLOCK": 16, "n": 10, "alpha": 2.0}),
            Op("index", ("x",), {"idx": [[1, None, None], [0, 4, None]]}, ("rows",)),
            Op(
                "tk.double_kept_rows",
                ("rows", "keep"),
                {"grid": [2], "BLOCK": 4, "ncols": 3, "row_stride": "stride(0, 0)"},
            ),
        ),
    )
    steps = infer(p).steps
    (flat,) = steps[0].opdef.written(steps[0].args, steps[0].op.params)
    assert flat.elements() == frozenset(range(10))  # the first 10 storage elements
    (rows,) = steps[2].opdef.written(steps[2].args, steps[2].op.params)
    assert rows.elements() == frozenset({6, 7, 8, 12, 13, 14})  # may-write: 2 rows x 3 cols
    assert steps[2].opdef.read_indices(2) == (1,)
    # flat offsets of a strided (non-dense) view would leave its footprint
    strided = p.with_body(
        (
            Op("index", ("x",), {"idx": [[None, None, None], [0, None, 2]]}, ("h",)),
            Op("tk.scale_", ("h",), {"grid": [1], "BLOCK": 16, "n": 12, "alpha": 2.0}),
        )
    )
    with pytest.raises(InvalidArgument, match="not dense"):
        infer(strided)
    # the rows kernel assumes unit column stride
    cols = p.with_body(
        (
            Op("transpose", ("x",), {"dim0": 0, "dim1": 1}, ("xt",)),
            Op(
                "tk.double_kept_rows",
                ("xt", "keep"),
                {"grid": [4], "BLOCK": 4, "ncols": 4, "row_stride": "stride(0, 0)"},
            ),
        )
    )
    with pytest.raises(InvalidArgument, match="unit column stride"):
        infer(cols)

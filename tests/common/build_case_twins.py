"""Build the IR twins of ``shared/cases/*.py`` and write them to ``corpus/seeds/<stem>.json``.

Run ``python tests/common/build_case_twins.py`` from the repository root to (re)write the
JSON, or ``--check`` to verify that the stored JSON equals what this script builds. The
JSON files are the source of truth (loading one runs no code); this script only records
how they were made. ``tests/corpus/test_case_twins.py`` checks each twin against its case.
"""

from __future__ import annotations

import argparse
import ast
import sys
from pathlib import Path

import torch

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides
from tests.common.cases import CASES

ROOT = Path(__file__).resolve().parents[2]
SEEDS = ROOT / "corpus" / "seeds"


def _t(name: str, storage: str, shape, stride=None, offset: int = 0) -> TensorSpec:
    shape = tuple(shape)
    return TensorSpec(name, storage, shape, stride or contiguous_strides(shape), offset)


def _exact(name: str, values: torch.Tensor) -> StorageSpec:
    """A storage holding exactly ``values`` (flattened), for fills our inits do not match."""
    flat = values.reshape(-1)
    return StorageSpec(
        name,
        flat.numel(),
        str(flat.dtype).removeprefix("torch."),
        "values",
        {"data": flat.tolist()},
    )


def _case_meta(stem: str) -> dict:
    """expect / device / calls / pipeline_options parsed from the case file (no import)."""
    path = CASES / f"{stem}.py"
    tree = ast.parse(path.read_text())
    doc = ast.get_docstring(tree) or ""
    expect, device, in_expect = {}, "cpu", False
    for line in doc.splitlines():
        s = line.split("#")[0].strip()
        if s == "expect:":
            in_expect = True
            continue
        if in_expect and line.startswith("  ") and ":" in s:
            k, v = (x.strip() for x in s.split(":", 1))
            expect[k] = v
            continue
        in_expect = False
        if s.startswith("device:"):
            device = s.split(":", 1)[1].strip()
    meta = {
        "case": path.name,
        "expect": expect,
        "device": device,
        "calls": 1,
        "pipeline_options": {},
    }
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = getattr(node.targets[0], "id", None)
            if target == "calls":
                meta["calls"] = ast.literal_eval(node.value)
            elif target == "pipeline_options":
                meta["pipeline_options"] = ast.literal_eval(node.value)
    return meta


def _program(stem, storages, inputs, body, outputs=()) -> Program:
    return Program(tuple(storages), tuple(inputs), tuple(body), tuple(outputs), _case_meta(stem))


def b01():
    return _program(
        "b01_clone_dropped_custom_op",
        [StorageSpec("xs", 8)],
        [_t("x", "xs", (8,))],
        [Op("clone", ("x",), {}, ("c",)), Op("fz.rotate_left_into", ("c", "x"))],
    )


def b03():
    return _program(
        "b03_scatter_result_overwritten_by_fill",
        [StorageSpec("xs", 12), StorageSpec("rs", 6, init_args={"start": -1, "step": -1})],
        [_t("x", "xs", (4, 3)), _t("rows", "rs", (2, 3))],
        [
            Op("slice_scatter", ("x", "rows"), {"dim": 0, "start": 1, "end": 3}, ("fresh",)),
            Op("fill_", ("x",), {"value": 0.0}, ("x1",)),
        ],
        ["fresh"],
    )


def b05():
    return _program(
        "b05_noop_clone_changes_storage_offset",
        [StorageSpec("xs", 10)],
        [_t("x", "xs", (10,))],
        [
            Op("index", ("x",), {"idx": [[3, None, None]]}, ("tail",)),
            Op("clone", ("tail",), {}, ("c",)),
            Op("fz.storage_layout", ("c",), {}, ("layout",)),
        ],
        ["layout"],
    )


def b07():
    return _program(
        "b07_mutation_through_eval_dropout",
        [StorageSpec("xs", 9, init="ones")],
        [_t("x", "xs", (3, 3))],
        [
            Op("dropout_eval", ("x",), {"p": 0.5}, ("same",)),
            Op("mul_.Scalar", ("same",), {"other": 2.0}, ("same1",)),
            Op("add", ("same1", "x"), {}, ("out",)),
        ],
        ["out"],
    )


def b09():
    return _program(
        "b09_custom_ops_on_sibling_views",
        [StorageSpec("base", 12), StorageSpec("ds", 3, init="zeros")],
        [_t("p", "base", (2, 3)), _t("q", "base", (2, 3), offset=6), _t("dst", "ds", (3,))],
        [
            Op("fz.bump_pair", ("p", "q")),
            Op("index", ("p",), {"idx": [0]}, ("p0",)),
            Op("index", ("q",), {"idx": [0]}, ("q0",)),
            Op("fz.sum_into", ("p0", "q0", "dst")),
        ],
        ["dst"],
    )


def b10():
    return _program(
        "b10_custom_op_fills_fresh_buffer",
        [
            StorageSpec("as_", 4, init_args={"start": 2}),
            StorageSpec("bs", 8, init_args={"start": -3}),
        ],
        [_t("a", "as_", (4,)), _t("b", "bs", (8,))],
        [
            Op("full", (), {"shape": [2, 6], "value": 1.0}, ("buf",)),
            Op("fz.pack_flat_", ("buf", "a", "b")),
            Op("mul", ("buf", "buf"), {}, ("sq",)),
            # (buf * buf).sum(): the registry's sum takes one dim, so flatten first
            Op("view", ("sq",), {"shape": [-1]}, ("flat",)),
            Op("sum", ("flat",), {"dim": 0}, ("total",)),
        ],
        ["total", "buf"],
    )


def b12():
    body = [Op("mul.Scalar", ("x",), {"other": 10}, ("vals",))]
    seen = []
    for i in range(3):  # the case's Python loop, unrolled as Dynamo unrolls it
        body += [
            Op("index", ("vals",), {"idx": [i]}, (f"v{i}",)),
            Op("expand", (f"v{i}",), {"size": [4]}, (f"wide{i}",)),
            Op("setitem.Scalar", (f"wide{i}",), {"idx": [-1], "value": 7 + i}),
            Op("clone", (f"wide{i}",), {}, (f"seen{i}",)),
        ]
        seen.append(f"seen{i}")
    return _program(
        "b12_setitem_on_expanded_view",
        [StorageSpec("xs", 3, dtype="int64")],
        [_t("x", "xs", (3,))],
        body,
        [*seen, "vals"],
    )


def b13():
    return _program(
        "b13_view_alias_across_graph_break",
        [StorageSpec("xs", 1, dtype="int64", init="values", init_args={"data": [1]})],
        [_t("x", "xs", (1,))],
        [
            Op("clone", ("x",), {}, ("c",)),
            Op("index", ("c",), {"idx": [[0, 1, None]]}, ("a",)),
            Op("squeeze", ("a",), {}, ("b",)),
            Op("setitem.Scalar", ("a",), {"idx": [0], "value": 0}),
            Op("if_lt_add_", ("a",), {"index": [0], "bound": 10, "other": 0}),
            Op("setitem.Scalar", ("a",), {"idx": [0], "value": 2}),
        ],
        ["b"],
    )


def b15():
    return _program(
        "b15_triton_same_tensor_two_mutated_args",
        [StorageSpec("xs", 8)],
        [_t("x", "xs", (8,))],
        [Op("tk.scale_then_shift", ("x", "x"), {"grid": [1], "BLOCK": 8})],
    )


def b16():
    return _program(
        "b16_triton_flat_indexing_layout",
        [StorageSpec("xs", 6), StorageSpec("os", 6, init="zeros")],
        [_t("x", "xs", (2, 3)), _t("other", "os", (3, 2))],
        [
            Op("t", ("x",), {}, ("xt",)),
            Op("contiguous", ("xt",), {}, ("xc",)),
            Op("t", ("xc",), {}, ("y",)),
            Op("sin", ("y",), {}, ("ys",)),
            Op("t", ("ys",), {}, ("z",)),
            Op("empty_like", ("other",), {}, ("out",)),
            Op(
                "tk.flat_add",
                ("z", "other", "out"),
                {"grid": ["cdiv(numel(0), 16)"], "BLOCK": 16, "n": "numel(0)"},
            ),
        ],
        ["out"],
    )


def b18():
    base = torch.linspace(-2.0, 2.0, 9 * 32)  # float32 as the case computes it
    return _program(
        "b18_triton_partial_write_offset_view",
        [
            _exact("bs", base),
            _exact("ks", torch.tensor([1, 0, 1, 0, 0, 1, 1, 0], dtype=torch.int32)),
        ],
        [_t("base", "bs", (9, 32)), _t("keep", "ks", (8,))],
        [
            Op("tanh", ("base",), {}, ("work",)),
            Op("index", ("work",), {"idx": [[1, None, None]]}, ("rows",)),
            Op(
                "tk.double_kept_rows",
                ("rows", "keep"),
                {
                    "grid": ["size(0, 0)"],
                    "BLOCK": 32,
                    "ncols": "size(0, 1)",
                    "row_stride": "stride(0, 0)",
                },
            ),
        ],
        ["rows"],
    )


def b19():
    return _program(
        "b19_custom_op_on_input_row_v1",
        [StorageSpec("xs", 12)],
        [_t("x", "xs", (3, 4))],
        [Op("index", ("x",), {"idx": [1]}, ("row",)), Op("fz.halve_", ("row",))],
    )


def b20():
    return _program(
        "b20_slice_update_then_index_put_temp",
        [
            StorageSpec("xs", 64),
            StorageSpec("rs", 2, dtype="int64", init="values", init_args={"data": [0, 5]}),
            StorageSpec("vs", 8, init="values", init_args={"data": [-1.0] * 8}),
        ],
        [_t("x", "xs", (16, 4)), _t("rows", "rs", (2,)), _t("vals", "vs", (2, 4))],
        [
            Op("setitem_iadd.Scalar", ("x",), {"idx": [[1, -1, None]], "value": 1.0}),
            # x[rows] = vals: the registry's index_put_ takes its indices as an inline
            # constant (their values decide the footprint); rows stays an unused input
            Op("index_put_", ("x", "vals"), {"indices": [[0, 5]]}, ("x1",)),
        ],
    )


def b23():
    return _program(
        "b23_script_rotating_buffers",
        [StorageSpec("vs", 5, init="values", init_args={"data": [1.0, 2.0, 4.0, 8.0, 16.0]})],
        [_t("v", "vs", (5,))],
        [
            Op("zeros", (), {"shape": [1]}, ("p",)),
            Op("zeros", (), {"shape": [1]}, ("q",)),
            Op("zeros", (), {"shape": [1]}, ("r",)),
            Op("zeros", (), {"shape": [5]}, ("seen",)),
            Op("loop_rotate3_accumulate", ("p", "q", "r", "v", "seen")),
        ],
        ["seen"],
    )


def b25():
    return _program(
        "b25_script_copy_into_input_requires_grad",
        [StorageSpec("as_", 8)],
        [_t("a", "as_", (8,))],
        [
            Op("mul.Scalar", ("a",), {"other": 3}, ("a3",)),
            Op("add.Scalar", ("a3",), {"other": 1}, ("d",)),
            Op("copy_", ("a", "d"), {}, ("a1",)),
        ],
        ["d"],
    )


def c01():
    return _program(
        "c01_strided_input_mutation_then_as_strided_copy",
        [StorageSpec("xs", 12)],
        [_t("x", "xs", (4,), (3,))],
        [
            Op("mul_.Scalar", ("x",), {"other": 2}, ("x1",)),
            Op("as_strided_copy", ("x1",), {"size": [2], "stride": [3], "offset": 0}, ("y",)),
        ],
        ["y"],
    )


def c06():
    return _program(
        "c06_indexed_update_ignores_caller_workspace",
        [
            StorageSpec("fs", 64),
            StorageSpec("rs", 3, dtype="int64", init="values", init_args={"data": [1, 5, 9]}),
            StorageSpec("ws", 12, init="zeros"),
        ],
        [_t("field", "fs", (16, 4)), _t("rows", "rs", (3,)), _t("work", "ws", (3, 4))],
        [
            Op("getitem_tensor", ("field", "rows"), {}, ("g",)),
            Op("mul.Scalar_out", ("g", "work"), {"other": 0.5}, ("w1",)),
            Op("setitem_tensor", ("field", "work", "rows")),
        ],
    )


BUILDERS = [b01, b03, b05, b07, b09, b10, b12, b13, b15, b16, b18, b19, b20, b23, b25, c01, c06]


def build_all() -> dict[str, Program]:
    """Every twin, keyed by its case's file stem."""
    out = {}
    for build in BUILDERS:
        p = build()
        out[p.meta["case"].removesuffix(".py")] = p
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare instead of writing")
    ap.add_argument("names", nargs="*", help="case stems or prefixes (default: all)")
    args = ap.parse_args(argv)
    SEEDS.mkdir(parents=True, exist_ok=True)
    bad = 0
    for stem, prog in build_all().items():
        if args.names and not any(stem.startswith(n) for n in args.names):
            continue
        path = SEEDS / f"{stem}.json"
        text = prog.dumps() + "\n"
        try:
            prog.validate()
        except InvalidArgument as e:
            # a row it needs is not in the registry yet: leave no half-valid twin behind
            print(f"NOT written (invalid): {path.name}: {e}")
            bad += 1
            continue
        if args.check:
            if not path.exists() or path.read_text() != text:
                print(f"differs: {path.name}")
                bad += 1
        else:
            path.write_text(text)
            print(f"wrote {path.relative_to(ROOT)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

"""Property tests of the program generator and the deterministic sampler.

Every generated program type-checks, round-trips through JSON, renders, runs eagerly
without error, and the rendered source agrees exactly (bits, layouts, aliasing) with the
registry interpreter. The sampler gives the same programs for the same seed in another
process. The ``fuzz`` variants run many more examples (``pytest -m fuzz``).
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import example, find, given, settings
from hypothesis import strategies as st

import aliasfuzz.fuzz.strategies
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.eager import alias_map, interpret, make_inputs, run_eager
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.fuzz.ops import REGISTRY, lookup
from aliasfuzz.fuzz.render import render_module
from aliasfuzz.fuzz.sample import generate, generate_one, sample_programs
from aliasfuzz.fuzz.strategies import FAMILIES, programs
from tests.common import assert_same

# Two overlapping inputs on one storage, one written in place through the other's bytes.
_ALIASED = Program(
    storages=(StorageSpec("s0", 6),),
    inputs=(TensorSpec("x0", "s0", (4,), (1,), 0), TensorSpec("x1", "s0", (4,), (1,), 2)),
    body=(Op("add_", ("x0", "x0"), {}, ("v0",)),),
    outputs=("x1", "v0"),
)


#: Families with at least one generatable registry row (the registry grows over time).
_GENERATABLE = [
    f for f, kinds in FAMILIES.items() if any(d.gen and d.kind in kinds for d in REGISTRY.values())
]


def check_program(p: Program) -> None:
    """The generator's contract for one program (see the module docstring)."""
    p.validate()
    assert Program.loads(p.dumps()) == p
    compile(render_module(p).source, "<program>", "exec")
    eager = run_eager(p)
    assert eager.error is None, f"eager raised {eager.error!r} on\n{render_module(p).source}"
    inputs = make_inputs(p)
    outs = interpret(p, inputs)
    assert_same(eager.outputs, outs, "output")
    assert_same(eager.inputs_after, inputs, "input after the call")
    assert alias_map(outs, inputs, [t.name for t in p.inputs]) == eager.aliases


@given(programs())
@example(_ALIASED)
def test_generated_programs_are_valid(p):
    check_program(p)


@given(programs(families=("view", "inplace", "custom"), dtypes=("float32", "int64"), max_inputs=2))
def test_generated_views_and_inplace_are_valid(p):
    check_program(p)


@pytest.mark.parametrize("seed", [0, 1])
def test_sampled_programs_are_valid(seed):
    for p in generate(60, seed):
        check_program(p)


@given(st.data())
def test_options_are_respected(data):
    fams = data.draw(st.lists(st.sampled_from(_GENERATABLE), min_size=1, unique=True))
    n = data.draw(st.integers(0, 4))
    # the own-stream families add a statement (and an input) after the draw, beyond these
    # options by design; their own tests cover them (test_advindex_gen, test_metadata_resize,
    # test_optional_inputs)
    own = {"advindex_share": 0.0, "metadata_share": 0.0, "optional_share": 0.0}
    p = data.draw(programs(families=fams, max_statements=n, aliased_inputs=False, max_inputs=2,
                           **own))
    kinds = {k for f in fams for k in FAMILIES[f]}
    assert len(p.body) <= n
    assert all(lookup(op.op).kind in kinds for op in p.body)
    data_inputs = [t for t in p.inputs if p.storage_by_name[t.storage].dtype == "float32"]
    assert 1 <= len(data_inputs) <= 2
    assert len({t.storage for t in p.inputs}) == len(p.inputs)


@pytest.mark.parametrize(
    "opts",
    [
        {"max_statements": -1},
        {"max_statements": True},
        {"families": ()},
        {"families": "view"},
        {"families": ("view", "nope")},
        {"dtypes": ("float128",)},
        {"device": "tpu"},
        {"aliased_inputs": 1},
        {"max_inputs": 0},
        {"families": ()},
    ],
)
def test_bad_options_raise_at_creation(opts):
    with pytest.raises(InvalidArgument):
        programs(**opts)
    with pytest.raises(InvalidArgument):
        generate(1, 0, **opts)


def test_shrinks_to_a_small_program():
    p = find(programs(), lambda p: len(p.body) >= 2, settings=settings(database=None))
    assert len(p.body) == 2
    # the shrink may stop at one drawn statement and an own-stream family's, which returns
    # its result (the optional family's ``v``): a local minimum of Hypothesis's shrinker
    assert p.outputs == () or p.meta.keys() & {"advindex", "metadata", "optional"}, p


def test_sampler_is_a_pure_function_of_seed_and_index():
    ps = generate(20, 3)
    assert [generate_one(3, i) for i in (0, 7, 19)] == [ps[0], ps[7], ps[19]]
    assert generate(5, 3) == ps[:5]
    assert generate(20, 4) != ps
    texts = sample_programs(2, 3)
    for text, p in zip(texts, ps[:2], strict=True):
        head, _, tail = text.partition("def make_inputs(")
        assert head.rstrip() == render_module(p).source.rstrip()
        assert tail
    namespace: dict = {}
    exec(texts[0], namespace)  # the printed text is runnable: inputs, then the program
    namespace["program"](*namespace["make_inputs"]())


_CHILD = (
    "import json; from aliasfuzz.fuzz.sample import generate; "
    "print(json.dumps([p.dumps() for p in generate(40, 11)]))"
)


def _source_digest() -> str:
    """Digest of the generator's and registry's source (a concurrent edit shows here)."""
    root = Path(aliasfuzz.fuzz.strategies.__file__).parent
    return hashlib.sha256(b"".join(f.read_bytes() for f in sorted(root.rglob("*.py")))).hexdigest()


#: The source this process imported (the registry is loaded at collection time).
_IMPORTED_SOURCE = _source_digest()


def test_sampler_is_deterministic_across_processes():
    here = [p.dumps() for p in generate(40, 11)]
    env = {**os.environ, "PYTHONHASHSEED": "12345"}
    out = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env)
    assert out.returncode == 0, out.stderr[-2000:]
    if _source_digest() != _IMPORTED_SOURCE:
        pytest.skip("the generator's source changed while the test ran")
    there = json.loads(out.stdout)
    diff = [i for i, (a, b) in enumerate(zip(here, there, strict=True)) if a != b]
    assert not diff, f"programs {diff} differ; first:\n{here[diff[0]]}\n---\n{there[diff[0]]}"


@pytest.mark.fuzz
@settings(max_examples=3000)
@given(programs(max_statements=12, dtypes=("float32", "float64", "float16", "int64", "bool")))
def test_generated_programs_are_valid_fuzz(p):
    check_program(p)


@pytest.mark.fuzz
def test_sampled_programs_are_valid_fuzz():
    for p in generate(3000, 12345, max_statements=12):
        check_program(p)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_programs_keep_every_tensor_on_the_inputs_device(seed):
    # A CUDA campaign fails when a statement builds a CPU tensor (an inline index constant,
    # a custom op's result) and mixes it with the inputs. The meta device catches the same
    # mixing on a machine without a GPU: CPU and meta tensors refuse to meet, as CPU and
    # CUDA ones do.
    failures = []
    for p in generate(150, seed, device="cuda"):
        r = run_eager(p, device="meta")
        if r.error is not None:
            failures.append(f"{r.error!r}\n{render_module(p).source}")
    assert not failures, f"{len(failures)} programs mix devices; first:\n{failures[0]}"


def test_generated_matmuls_are_floating_point():
    # CUDA has no integer matmul (seen on the H200: "dot" not implemented for 'Long');
    # the meta device accepts it, so this is checked on the IR
    from aliasfuzz.fuzz.validate import infer

    seen = 0
    for p in generate(400, 11, device="cuda"):
        for step in infer(p).steps:
            if step.op.op == "matmul":
                seen += 1
                assert all("float" in m.dtype for m in step.args), step.op
    assert seen > 0

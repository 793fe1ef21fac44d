"""Stand-ins used by :mod:`._judge` only while the real generator, pipelines or oracle are absent.

They are deliberately small: a seeded random generator over the registry's basic ops, the
pipelines through ``torch.compile`` / ``make_fx``, and a differential judge (values, mutated
inputs, output aliasing) with the cases' tolerances (rtol 1e-4, atol 1e-5). Once
``fuzz/sample.py``, ``passes/`` and ``oracle/judge.py`` provide the real thing, nothing
here is used (see ``_judge.py``).
"""

from __future__ import annotations

import random
from typing import Any

from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec, contiguous_strides

PIPELINES = ("eager", "aot_eager", "inductor", "inductor-reinplace", "fx-reinplace")


# -- generator ---------------------------------------------------------------------
def _program(rng: random.Random, max_statements: int) -> Program:
    shape = (4, 4)
    storages = [StorageSpec("s0", 16, init="arange")]
    inputs = [TensorSpec("x", "s0", shape, contiguous_strides(shape))]
    env = {"x": shape}  # name -> shape (every value is float32)
    body: list[Op] = []
    for i in range(rng.randint(1, max_statements)):
        name = f"v{i}"
        src = rng.choice(sorted(env))
        shp = env[src]
        kind = rng.choice(["view", "functional", "inplace", "custom"])
        if kind == "view" and shp:
            d = rng.randrange(len(shp))
            choice = rng.choice(["select", "narrow", "transpose"])
            if choice == "select":
                op = Op("select", (src,), {"dim": d, "index": rng.randrange(shp[d])}, (name,))
                env[name] = shp[:d] + shp[d + 1 :]
            elif choice == "narrow":
                start = rng.randrange(shp[d])
                length = rng.randint(1, shp[d] - start)
                op = Op("narrow", (src,), {"dim": d, "start": start, "length": length}, (name,))
                env[name] = shp[:d] + (length,) + shp[d + 1 :]
            else:
                d1 = rng.randrange(len(shp))
                op = Op("transpose", (src,), {"dim0": d, "dim1": d1}, (name,))
                s = list(shp)
                s[d], s[d1] = s[d1], s[d]
                env[name] = tuple(s)
        elif kind == "inplace":
            op = Op("add_.Scalar", (src,), {"other": rng.choice([1.0, 2.0, -1.5])}, (name,))
            env[name] = shp
        elif kind == "custom":
            op = Op("fz.add_one_", (src,), {}, ())
        else:
            fn = rng.choice(["sin", "clone", "mul.Scalar"])
            params = {"other": 3.0} if fn == "mul.Scalar" else {}
            op = Op(fn, (src,), params, (name,))
            env[name] = shp
        body.append(op)
    outs = [n for n in env if n != "x"][-2:] or ["x"]
    return Program(tuple(storages), tuple(inputs), tuple(body), tuple(outs))


def generate(n: int, seed: int, max_statements: int = 8) -> list[Program]:
    """``n`` valid programs, a pure function of ``seed``."""
    rng = random.Random(seed)
    out = []
    while len(out) < n:
        p = _program(rng, max_statements)
        try:
            p.validate()
        except Exception:  # noqa: BLE001 - an invalid draw is retried, as the generator does
            continue
        out.append(p)
    return out


# -- pipelines -----------------------------------------------------------------------
def _compile(name: str, fn):
    import torch

    torch._dynamo.reset()
    if name in ("aot_eager", "inductor"):
        import torch._inductor.config as ic

        ic.force_disable_caches = True
        return torch.compile(fn, backend=name, fullgraph=False)
    if name == "inductor-reinplace":
        return torch.compile(fn, backend=_reinplace_backend())
    if name == "eager":
        return fn
    raise AssertionError(name)


def _reinplace_backend():
    # shared/notes/pytorch-seams.md §2: the reinplace pass standalone as forward compiler.
    from torch._dynamo.backends.common import aot_autograd
    from torch._guards import detect_fake_mode
    from torch._inductor.decomposition import select_decomp_table
    from torch._inductor.fx_passes import post_grad as pg
    from torch._inductor.fx_passes import reinplace as rp
    from torch._inductor.fx_utils import FakeTensorUpdater
    from torch._inductor.virtualized import V

    def fw(gm, _inputs):
        fm = detect_fake_mode([n.meta["val"] for n in gm.graph.nodes if "val" in n.meta])
        with V.set_fake_mode(fm):
            rp.reinplace_inplaceable_ops(FakeTensorUpdater(gm), gm.graph)
            pg.decompose_triton_kernel_wrapper_functional(gm.graph)
            pg.decompose_auto_functionalized(gm.graph)
        gm.recompile()
        return gm

    return aot_autograd(
        fw_compiler=fw, decompositions=select_decomp_table(), keep_inference_input_mutations=True
    )


def run(program: Program, pipeline: str, device: str) -> dict[str, Any]:
    """Run one pipeline and the eager reference; a differential verdict as a dict."""
    import torch

    from aliasfuzz.fuzz.eager import make_inputs, run_callable, run_eager
    from aliasfuzz.fuzz.render import load_function

    ref = run_eager(program, device=device)
    if ref.error is not None:
        return {"verdict": "invalid-program", "check": "eager", "explanation": repr(ref.error)}
    fn, _ = load_function(program)
    try:
        if pipeline == "fx-reinplace":
            from torch.fx.experimental.proxy_tensor import make_fx
            from torch.fx.passes.reinplace import reinplace

            ins = make_inputs(program, device)
            gm = reinplace(make_fx(torch.func.functionalize(fn))(*ins), *ins)
            compiled = gm
        else:
            compiled = _compile(pipeline, fn)
        got = run_callable(compiled, program, make_inputs(program, device))
    except Exception as e:  # the system under test failed: data, not an exception
        return {
            "verdict": "crash",
            "check": "compile",
            "explanation": f"{type(e).__name__}: {e}"[:500],
        }
    if got.error is not None:
        e = got.error
        return {"verdict": "crash", "check": "run", "explanation": f"{type(e).__name__}: {e}"[:500]}
    return differential([t.name for t in program.inputs], ref, got)


def _same(a, b) -> bool:
    import torch

    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return a is None and b is None
    if a.shape != b.shape or a.dtype != b.dtype:
        return False
    return torch.allclose(a.detach(), b.detach(), rtol=1e-4, atol=1e-5, equal_nan=True)


def differential(names: list[str], ref, got) -> dict[str, Any]:
    """Compare eager ``ref`` with ``got`` (an EagerResult or an Execution): values,
    inputs after the call, output aliasing. The verdict is a dict."""
    if len(ref.outputs) != len(got.outputs):
        return {"verdict": "miscompile", "check": "values", "explanation": "output count differs"}
    for i, (a, b) in enumerate(zip(ref.outputs, got.outputs, strict=False)):
        if not _same(a, b):
            return {
                "verdict": "miscompile",
                "check": "values",
                "explanation": f"output {i} differs",
                "diff": f"eager:\n{a}\ncompiled:\n{b}",
            }
    for n, a, b in zip(names, ref.inputs_after, got.inputs_after, strict=False):
        if not _same(a, b):
            return {
                "verdict": "miscompile",
                "check": "mutated-inputs",
                "explanation": f"input {n} after the call differs",
                "diff": f"eager:\n{a}\ncompiled:\n{b}",
            }
    if ref.aliases != got.aliases:
        return {
            "verdict": "miscompile",
            "check": "aliasing",
            "explanation": f"output aliasing differs: eager {ref.aliases} vs {got.aliases}",
        }
    return {"verdict": "ok"}

"""Standalone ``repro.py`` for a corpus entry: needs only torch (and triton for kernels).

The file holds the program (custom ops and kernels inlined by
:func:`aliasfuzz.fuzz.render.render_module`), its inputs (:func:`render_inputs`, the same
expressions the eager reference uses) and a ``__main__`` that runs eager and the
pipeline on fresh inputs and prints every output / input that differs. Exit status 1 when
something differs, 0 otherwise. ``inductor-reinplace`` has no torch-only form: the repro
uses ``torch.compile(backend="inductor")``, whose post-grad passes include the same pass.
"""

from __future__ import annotations

from typing import Any

from aliasfuzz.fuzz.ir import Program

__all__ = ["render_repro"]

_MAIN = """

PIPELINE = {pipeline!r}


def compiled(fn, pipeline, inputs):
    torch._dynamo.reset()
    if pipeline == "fx-reinplace":
        from torch.fx.experimental.proxy_tensor import make_fx
        from torch.fx.passes.reinplace import reinplace

        return reinplace(make_fx(torch.func.functionalize(fn))(*inputs), *inputs)
    if pipeline in ("inductor", "inductor-reinplace", "aot_eager"):
        from torch._inductor import config as inductor_config

        inductor_config.force_disable_caches = True
        backend = "aot_eager" if pipeline == "aot_eager" else "inductor"
        return torch.compile(fn, backend=backend)
    return fn


def as_tuple(r):
    return () if r is None else (r if isinstance(r, tuple) else (r,))


def differs(a, b):
    if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        return (a is None) != (b is None)
    if a.shape != b.shape or a.dtype != b.dtype:
        return True
    return not torch.allclose(a.detach(), b.detach(), rtol=1e-4, atol=1e-5, equal_nan=True)


def aliasing(outs, ins):
    # for each output, the indices of the inputs sharing its storage
    def key(t):
        return t.untyped_storage().data_ptr() if isinstance(t, torch.Tensor) else None

    return [[j for j, x in enumerate(ins) if key(o) is not None and key(o) == key(x)]
            for o in outs]


def main(pipeline=PIPELINE):
    ref_in = make_inputs()
    ref_out = as_tuple(program(*ref_in))
    got_in = make_inputs()
    got_out = as_tuple(compiled(program, pipeline, make_inputs())(*got_in))
    bad = 0
    for i, (a, b) in enumerate(zip(ref_out, got_out)):
        if differs(a, b):
            bad += 1
            print(f"output {{i}} differs\\n  eager:    {{a}}\\n  compiled: {{b}}")
    for i, (a, b) in enumerate(zip(ref_in, got_in)):
        if differs(a, b):
            bad += 1
            print(f"input {{i}} after the call differs\\n  eager:    {{a}}\\n  compiled: {{b}}")
    if aliasing(ref_out, ref_in) != aliasing(got_out, got_in):
        bad += 1
        print(f"outputs alias inputs differently\\n  eager:    {{aliasing(ref_out, ref_in)}}"
              f"\\n  compiled: {{aliasing(got_out, got_in)}}")
    if len(ref_out) != len(got_out):
        bad += 1
        print(f"eager returned {{len(ref_out)}} outputs, compiled {{len(got_out)}}")
    print("DIFFERS" if bad else "SAME", f"({{pipeline}}, expected: {expected!r})")
    return 1 if bad else 0


if __name__ == "__main__":
    import sys

    sys.exit(main(*sys.argv[1:2]))
"""


def render_repro(program: Program, meta: dict[str, Any]) -> str:
    """The source text of ``repro.py`` for ``program`` and its entry ``meta``."""
    from aliasfuzz.fuzz.render import render_inputs, render_module

    exp = meta.get("expected", {})
    head = (
        f'"""aliasfuzz finding {meta.get("id", "")}: {exp.get("verdict")} on '
        f"{exp.get('pipeline')} (check: {exp.get('check')}).\n\n"
        f"{(meta.get('explanation') or '').strip()[:400]}\n\n"
        f'Versions: {meta.get("versions", {})}. Run: python repro.py [PIPELINE]\n"""\n'
    )
    body = render_module(program, inline_preludes=True).source
    return (
        head
        + body
        + "\n\n"
        + render_inputs(program)
        + _MAIN.format(pipeline=exp.get("pipeline", "inductor"), expected=exp.get("verdict"))
    )

"""Words for a finding: the stage blamed, the effect, a one-line title (repros, reports).

:func:`title` gives the first line of a ``repro.py`` docstring and of an upstream issue
draft: ``[component] <stage in words> <effect>: <first line of the explanation>``, e.g.
``[inductor] joint-graph pass remove_noop_ops returns wrong values: out0: ...``. The
component is the label PyTorch's tracker uses for the code that holds the stage
(``dynamo``, ``aot_autograd``, ``functorch``, ``fx``, ``inductor``, ``jit``).

The claim names the observable that differs: an input's or output's values where a value
differs, and says so plainly where only output aliasing does (the oracle reports
``aliasing`` only after values and inputs agreed, ``oracle/differential.py``).
:func:`known_lines` puts a known upstream bug (``corpus/known.toml``) up front: its issue,
its title and why the difference is a bug.
"""

from __future__ import annotations

from typing import Any

__all__ = ["effect", "first_line", "known_lines", "stage_words", "title", "ts_check"]

#: stage -> (component label of an upstream title, words for the stage)
_STAGES: dict[str, tuple[str, str]] = {
    "dynamo": ("dynamo", "Dynamo capture"),
    "decomposition": ("aot_autograd", "decomposition"),
    "functionalization": ("aot_autograd", "functionalization"),
    "aot": ("inductor", "pre-grad passes"),
    "reinplace": ("inductor", "reinplace_inplaceable_ops"),
    "lowering": ("inductor", "lowering"),
    "scheduler": ("inductor", "scheduler (fusion)"),
    "ts-frontend": ("jit", "TorchScript interpreter (simple executor)"),
    "ts-optimizer": ("jit", "profiling executor's graph passes"),
    "ts-fuser": ("jit", "TensorExpr fuser"),
}
#: the same stages under make_fx(functionalize(f)) + torch.fx.passes.reinplace
_FX_STAGES = {
    "decomposition": ("fx", "make_fx tracing"),
    "functionalization": ("functorch", "torch.func.functionalize"),
    "reinplace": ("fx", "torch.fx.passes.reinplace"),
}

#: pipeline -> (component, words) when no stage was blamed
_UNBLAMED = {
    "torchscript": ("jit", "torch.jit.script"),
    "fx-reinplace": ("fx", "make_fx(functionalize(f)) + torch.fx.passes.reinplace"),
    "aot_eager": ("aot_autograd", 'torch.compile(backend="aot_eager")'),
    "inductor": ("inductor", 'torch.compile(backend="inductor")'),
    "inductor-reinplace": ("inductor", "Inductor up to its post-grad passes"),
}

#: (verdict, check) -> the effect, for titles (check None: any check)
_EFFECTS = {
    ("miscompile", "values"): "returns wrong values",
    ("miscompile", "inputs"): "mutates an input differently from eager",
    ("miscompile", "aliasing"): "differs from eager only in which outputs share storage "
                                "(every value agrees)",
    ("miscompile", "requires_grad"): "sets requires_grad differently from eager",
    ("miscompile", None): "computes something other than eager",
    ("crash", None): "raises where eager does not",
    ("timeout", None): "hangs where eager does not",
    ("missed-reinplace", None): "keeps a copy it could write in place",
    ("unsafe-reinplace", None): "writes in place over a value read later",
    ("invariant", None): "leaves a broken graph",
}

def stage_words(stage: str | None, pipeline: str = "") -> tuple[str, str]:
    """``(component, words)`` for a blamed stage: ``("inductor", "post-grad pass
    remove_noop_ops")``; unknown stages keep their name."""
    if not stage or stage.startswith("unblamed"):
        return _UNBLAMED.get(pipeline, ("inductor", "torch.compile"))
    for prefix, words in (("joint:", "joint-graph pass"), ("post-grad:", "post-grad pass")):
        if stage.startswith(prefix):
            return "inductor", f"{words} {stage[len(prefix):]}"
    table = _FX_STAGES if pipeline == "fx-reinplace" and stage in _FX_STAGES else _STAGES
    return table.get(stage, ("inductor", stage))


def first_line(text: str, width: int = 80) -> str:
    line = (text or "").split("\n")[0].split(" | ")[0].strip()
    return line if len(line) <= width else line[: width - 3] + "..."


def ts_check(explanation: str) -> str | None:
    """What a TorchScript explanation (``profiling call 0 (profiled): input x1 after the
    call: ...; output 0: ...``) says differs: ``requires_grad``, ``values``, ``inputs``,
    ``both`` or None."""
    head = explanation.split(" | ")[0].split("\n")[0]
    said = head.split("): ", 1)[1] if "): " in head else ""
    if "requires_grad" in said:
        return "requires_grad"
    outs = any(p.strip().startswith("output") for p in said.split("; "))
    ins = any(p.strip().startswith("input") for p in said.split("; "))
    return {(True, False): "values", (False, True): "inputs", (True, True): "both"}.get((outs, ins))


def effect(meta: dict[str, Any], sighting: dict[str, Any] | None = None) -> str:
    """What goes wrong, in words, from the entry's verdict and check (or a ``sighting``'s:
    a hit of ``meta["hits"]``): ``returns wrong values``, ``mutates an input differently
    from eager``, ... (the title's verb phrase)."""
    exp = sighting or meta.get("expected") or {}
    verdict, check = exp.get("verdict", ""), exp.get("check")
    if check == "torchscript":
        said = exp.get("explanation") if sighting else meta.get("explanation")
        check = ts_check(said or "")
    return _EFFECTS.get((verdict, check)) or _EFFECTS.get((verdict, None), verdict)


def title(meta: dict[str, Any], pipeline: str | None = None,
          sighting: dict[str, Any] | None = None) -> str:
    """One line naming the stage and the effect, for a report or an issue:
    ``[inductor] joint-graph pass remove_noop_ops returns wrong values: out0: ...`` (from
    ``root``, ``expected`` and ``explanation``; from ``sighting``'s ``verdict``, ``check``
    and ``explanation`` when the repro shows another hit than the entry's own program)."""
    exp = meta.get("expected") or {}
    root = meta.get("root") or {}
    pipeline = pipeline or exp.get("pipeline", "")
    comp, words = stage_words(root.get("stage") or meta.get("stage"), pipeline)
    said = sighting.get("explanation") if sighting else meta.get("explanation")
    detail = first_line(said or "", 120)  # room for "<eager value> in eager, <value> compiled"
    return f"[{comp}] {words} {effect(meta, sighting)}" + (f": {detail}" if detail else "")


def known_lines(meta: dict[str, Any]) -> list[str]:
    """``["known upstream: <issue> — <title>", <why>]`` for an entry whose root cause is a
    known upstream bug (``meta["known"]``, not a merely related one); ``[]`` otherwise.
    The second item (the bug's ``why`` from ``known.toml``) is left out when unset."""
    k = meta.get("known")
    if not isinstance(k, dict) or k.get("related") or not k.get("issue"):
        return []
    head = f"known upstream: {k['issue']} — {k.get('title', '')}".rstrip(" —")
    return [head, k["why"]] if k.get("why") else [head]



"""Standalone ``repro.py`` for a corpus entry: public PyTorch API, fit for an upstream report.

A repro is the minimized program (custom ops and Triton kernels inlined,
:mod:`._repro_source`), its inputs with exact layouts (``torch.as_strided`` over storages
built explicitly), one way of compiling it, and the comparison the finding needs; it
prints the versions, exits 1 when the bug shows, 0 when it does not ("fixed"), and 3 with
``CANNOT RUN HERE: needs a GPU`` when the program needs CUDA (user Triton kernels, a
CUDA finding) and there is none. Nothing in it imports aliasfuzz.

How it compiles (:func:`plan`): the entry's root cause may have been hit through several
pipelines (``meta["hits"]``, each with its minimized program); the repro takes the hit
with the most public way to show it, in this order:

=====================================  ================================================
hit                                    repro
=====================================  ================================================
``aot_eager``, ``inductor``            ``torch.compile(f, backend=<pipeline>)``
``inductor-reinplace``, ``full ==      ``torch.compile(f, backend="inductor")``: full
"reproduces"``                         ``torch.compile`` showed the fast path's finding
``fx-reinplace``                       ``make_fx(torch.func.functionalize(f))`` then
                                       ``torch.fx.passes.reinplace`` (public FX API)
``torchscript``                        ``torch.jit.script`` under the executor settings
                                       of the blamed stage, called as often as needed
``inductor-reinplace``, otherwise      a harness: ``torch.compile`` with Inductor stopped
(``hidden``, ``unsupported``, unknown)  after its post-grad passes, the graph run eagerly
=====================================  ================================================

A ``missed-reinplace`` claim is a decision inside Inductor's reinplace pass, so its repro
is a harness too: it wraps ``post_grad.reinplace_inplaceable_ops`` and prints the copies
the pass left (node and bytes); it exits 1 while they are there. Every harness says so,
and why, in its docstring. Where ``torch.compile`` (or FX, or TorchScript) reproduces, the
file stays within :data:`MAX_LINES` lines for the programs the fuzzer shrinks (tested).
"""

from __future__ import annotations

import re
import textwrap
from dataclasses import dataclass, field
from typing import Any

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ir import Program

__all__ = [
    "MAX_LINES", "Plan", "effect", "plan", "program_text", "render_repro", "stage_words", "title",
]

#: Line budget of a repro that needs no harness (issue 13).
MAX_LINES = 40

#: pipeline -> (rank, mode, backend): lower ranks are more public ways to reproduce.
_WAYS: dict[str, tuple[int, str, str | None]] = {
    "aot_eager": (0, "compile", "aot_eager"),
    "inductor": (1, "compile", "inductor"),
    "fx-reinplace": (3, "fx", None),
    "torchscript": (4, "jit", None),
}
_FAST = (2, "compile", "inductor")  # inductor-reinplace that full torch.compile reproduces
_HARNESS = (5, "fastpath", None)

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
    ("miscompile", "aliasing"): "returns outputs that share storage differently from eager",
    ("miscompile", "requires_grad"): "sets requires_grad differently from eager",
    ("miscompile", None): "computes something other than eager",
    ("crash", None): "raises where eager does not",
    ("timeout", None): "hangs where eager does not",
    ("missed-reinplace", None): "keeps a copy it could write in place",
    ("unsafe-reinplace", None): "writes in place over a value read later",
    ("invariant", None): "leaves a broken graph",
}

#: claimed decision kind (root evidence "<kind>:missed") -> copy rules of the watched pass
_COPY_RULES: dict[str, list[str]] = {
    "scatter": [
        'if n not in before and str(n.target).endswith("_scatter.default"):  # new base',
        '    copies.append(f"{n.name}: writes {nbytes(n)} bytes (all of its base) '
        'for a {nbytes(n.args[1])}-byte update")',
        "if n not in before and n.target is torch.ops.aten.clone.default:",
        '    copies.append(f"{n.name}: copies {nbytes(n)} bytes")',
    ],
    "index_put": [
        "if n.target is torch.ops.aten.index_put.default:  # not turned into index_put_",
        '    copies.append(f"{n.name}: copies its {nbytes(n.args[0])}-byte base")',
    ],
    "foreach": [
        'if str(n.target).startswith("aten._foreach_") and not str(n.target).split(".")[1].endswith("_"):',
        '    copies.append(f"{n.name}: writes {nbytes(n)} bytes into new buffers")',
    ],
    "triton_kernel_wrapper_functional": [
        "if n.target is torch.ops.higher_order.triton_kernel_wrapper_functional:",
        "    copies.extend(f\"{n.name}: clones {a} ({nbytes(n.kwargs['kwargs'][a])} bytes)\"",
        '                  for a in n.kwargs["tensors_to_clone"]@ARG@)',
    ],
    "auto_functionalized": [
        "if n.target in (torch.ops.higher_order.auto_functionalized,"
        " torch.ops.higher_order.auto_functionalized_v2):",
        '    bases = n.kwargs.get("_all_bases") or n.kwargs',
        '    copies.extend(f"{n.name}: clones {a} ({nbytes(bases[a])} bytes)"',
        '                  for a in n.meta.get("only_clone_these_tensors", ()))',
    ],
    "copy_epilogue": [
        'if n.target is torch.ops.aten.copy_.default and n.args[0].op == "placeholder":',
        '    copies.append(f"{n.name}: copies {nbytes(n.args[1])} bytes into {n.args[0].name}")',
    ],
}
_COPY_RULES["auto_functionalized_v2"] = _COPY_RULES["auto_functionalized"]


@dataclass(frozen=True)
class Plan:
    """How a repro shows a finding: which sighting, and how it compiles and compares.

    ``program``/``pipeline``/``verdict``/``check``: the chosen sighting (``own``: it is the
    entry's own program, so the entry's explanation and diff describe it); ``mode``:
    ``compile`` / ``fastpath`` / ``fx`` / ``jit`` / ``none``; ``backend``: the
    ``torch.compile`` backend of ``compile``; ``harness``: why the repro needs more than
    public API ("" when it does not); ``cuda``: the program needs a GPU.
    """

    program: Program
    pipeline: str
    verdict: str
    check: str | None
    mode: str
    backend: str | None
    cuda: bool
    own: bool
    harness: str = ""
    options: dict[str, Any] = field(default_factory=dict)


def _sightings(program: Program, meta: dict[str, Any]) -> list[tuple[Program, dict[str, Any], bool]]:
    exp = meta.get("expected") or {}
    own = {"pipeline": exp.get("pipeline", "inductor"), "verdict": exp.get("verdict"),
           "check": exp.get("check"), "full": meta.get("full")}
    out = [(program, own, True)]
    text = program.dumps()
    for h in meta.get("hits") or []:
        try:
            p = Program.from_json(h["program"])
        except (InvalidArgument, KeyError, TypeError):
            continue  # a hit without a readable program cannot be shown
        out.append((p, h, p.dumps() == text))
    return out


def _way(pipeline: str, full: str | None) -> tuple[int, str, str | None]:
    if pipeline == "inductor-reinplace":
        return _FAST if full == "reproduces" else _HARNESS
    return _WAYS.get(pipeline, (9, "none", None))


def _harness_reason(mode: str, verdict: str, full: str | None) -> str:
    why = []
    if mode == "fastpath":
        why.append({
            "hidden": "full torch.compile(backend=\"inductor\") agreed with eager on this program "
                      "(Inductor's lowering or codegen hides it), so this script stops Inductor after its "
                      "post-grad passes and runs that graph eagerly, as the fuzzer's fast path does",
            "unsupported": "full torch.compile(backend=\"inductor\") could not run this program "
                           "where it was found (user Triton kernels need a GPU), so this script "
                           "stops Inductor after its post-grad passes and runs that graph eagerly",
        }.get(full or "", "the finding was not re-judged under full torch.compile, so this script "
              "stops Inductor after its post-grad passes and runs that graph eagerly"))
    if verdict == "missed-reinplace":
        why.append("a missed reinplace is a decision inside Inductor's reinplace pass, so this "
                   "script wraps torch._inductor.fx_passes.post_grad.reinplace_inplaceable_ops "
                   "to list the copies it leaves (the fuzzer confirmed that writing the "
                   "candidate in place agrees with eager)")
    return "; ".join(why)


def plan(program: Program, meta: dict[str, Any]) -> Plan:
    """The :class:`Plan` of an entry (``program`` and its ``meta.json``): the sighting with
    the most public way to reproduce (see the module table), the entry's own program
    first among equals, then the smallest."""
    from aliasfuzz.campaign._repro_source import uses_triton

    def key(s):
        p, h, own = s
        return (_way(str(h.get("pipeline")), h.get("full"))[0], not own, len(p.body))

    p, h, own = min(_sightings(program, meta), key=key)
    pipeline = str(h.get("pipeline"))
    verdict = str(h.get("verdict") or (meta.get("expected") or {}).get("verdict"))
    _, mode, backend = _way(pipeline, h.get("full"))
    if mode == "fx" and verdict == "missed-reinplace":
        harness = ""  # the reinplaced FX graph is public: its node shows the decision
    else:
        harness = _harness_reason(mode, verdict, h.get("full"))
    cuda = uses_triton(p) or str(meta.get("device", "cpu")).startswith("cuda")
    options = dict(meta.get("pipeline_options") or {}) if own else {}
    return Plan(p, pipeline, verdict, h.get("check"), mode, backend, cuda, own, harness, options)


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


def _first_line(text: str, width: int = 80) -> str:
    line = (text or "").split("\n")[0].split(" | ")[0].strip()
    return line if len(line) <= width else line[: width - 3] + "..."


def _ts_check(explanation: str) -> str | None:
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


def effect(meta: dict[str, Any]) -> str:
    """What goes wrong, in words, from the entry's verdict and check: ``returns wrong
    values``, ``mutates an input differently from eager``, ... (the title's verb phrase)."""
    exp = meta.get("expected") or {}
    verdict, check = exp.get("verdict", ""), exp.get("check")
    if check == "torchscript":
        check = _ts_check(meta.get("explanation") or "")
    return _EFFECTS.get((verdict, check)) or _EFFECTS.get((verdict, None), verdict)


def title(meta: dict[str, Any], pipeline: str | None = None) -> str:
    """One line naming the stage and the effect, for a report or an issue:
    ``[inductor] joint-graph pass remove_noop_ops returns wrong values: out0: ...`` (from
    ``root``, ``expected`` and ``explanation``)."""
    exp = meta.get("expected") or {}
    root = meta.get("root") or {}
    pipeline = pipeline or exp.get("pipeline", "")
    comp, words = stage_words(root.get("stage") or meta.get("stage"), pipeline)
    detail = _first_line(meta.get("explanation") or "")
    return f"[{comp}] {words} {effect(meta)}" + (f": {detail}" if detail else "")


def _compare(plan_: Plan, meta: dict[str, Any]) -> tuple[str, str, str, str]:
    """``(check, what, want, got)``: what the repro compares, as the template needs it."""
    if plan_.verdict in ("crash", "timeout"):
        return "crash", "", "", ""
    if plan_.verdict == "missed-reinplace":
        return "copies", "", "", ""
    if plan_.verdict == "invariant":
        return "invariant", "", "", ""
    check = plan_.check
    if check == "torchscript" and plan_.own:
        check = _ts_check(meta.get("explanation") or "")
    if check not in ("values", "inputs", "aliasing", "requires_grad"):
        check = "both"
    return {
        "values": ("values", "outputs", "want", "got"),
        "inputs": ("inputs", "inputs after the call", "a", "b"),
        "both": ("both", "outputs and inputs after the call", "(want, a)", "(got, b)"),
        "aliasing": ("aliasing", "storage sharing", "shares(want, a)", "shares(got, b)"),
        "requires_grad": (
            "requires_grad", "requires_grad flags",
            "[t.requires_grad for t in (*(want or ()), *a) if isinstance(t, torch.Tensor)]",
            "[t.requires_grad for t in (*(got or ()), *b) if isinstance(t, torch.Tensor)]",
        ),
    }[check]


_EXECUTOR_LINES = {
    "profiling": "torch._C._jit_set_profiling_executor(True)  # the profiling executor (default)",
    "legacy": "torch._C._jit_set_profiling_executor(False)  # the legacy executor",
    "simple": "torch._C._get_graph_executor_optimize(False)  # the simple executor: no optimization",
}


def _jit(plan_: Plan, meta: dict[str, Any]) -> tuple[list[str], str, int, str]:
    """``(settings, script, calls, note)`` of a TorchScript repro: the executor and fuser
    of the blamed stage (``ts-frontend``: the simple executor; ``ts-optimizer``: fuser
    off; ``ts-fuser``: TensorExpr fuser on CPU), as many calls as the failing one needs."""
    o = dict(plan_.options.get("torchscript") or {})
    stage = (meta.get("root") or {}).get("stage") or ""
    said = re.match(r"(profiling|legacy|simple) call (\d+)", meta.get("explanation") or "")
    said = said if plan_.own else None
    chosen = "simple" if not o.get("optimize", True) else (
        "profiling" if o.get("profiling_executor", True) else "legacy")
    executor = {"ts-frontend": "simple"}.get(stage) or (
        chosen if stage.startswith("ts-") or said is None else said.group(1))
    settings = [_EXECUTOR_LINES[executor]]
    runs = int(o.get("num_profiled_runs", 1))
    if runs != 1 and executor == "profiling":
        settings.append(f"torch._C._jit_set_num_profiled_runs({runs})")
    if stage == "ts-optimizer":
        settings.append("torch._C._jit_set_texpr_fuser_enabled(False)  # blamed stage: before the fuser")
    elif executor != "simple" and o.get("fuser", True):
        settings += ["torch._C._jit_override_can_fuse_on_cpu(True)  # the TensorExpr fuser on CPU",
                     "torch._C._jit_set_te_must_use_llvm_cpu(torch._C._llvm_enabled())"]
    calls = int(said.group(2)) + 1 if said else int(o.get("calls") or runs + 2)
    note = {"simple": "every call runs the unoptimized graph",
            "legacy": "the legacy executor optimizes from the first call"}.get(
        executor, f"the first {runs} call(s) profile, later calls run the optimized graph")
    script = ("torch.jit.trace(f, inputs(), check_trace=False)" if o.get("mode") == "trace"
              else "torch.jit.script(f)")
    return settings, script, max(calls, 1), note


def _inductor_settings(plan_: Plan) -> tuple[list[str], str]:
    """``(config lines, extra torch.compile arguments)`` from the entry's pipeline options."""
    o = plan_.options
    lines = []
    if o.get("auto_functionalized_v2") is False:
        lines.append("torch._inductor.config.enable_auto_functionalized_v2 = False")
    lines += [f"torch._inductor.config.{k} = {v!r}" for k, v in (o.get("inductor_config") or {}).items()]
    return lines, (", dynamic=True" if o.get("dynamic") else "")


def _copy_rules(meta: dict[str, Any], plan_: Plan) -> list[str]:
    """The watched pass's rules for the claimed decision kinds (root evidence
    ``<kind>:missed``); every rule when the kind is not known."""
    kinds = [e.split(":")[0] for e in (meta.get("root") or {}).get("evidence") or []
             if e.endswith(":missed") and e.split(":")[0] in _COPY_RULES]
    kinds = list(dict.fromkeys(kinds)) or list(dict.fromkeys(
        k for k in _COPY_RULES if k != "auto_functionalized_v2"))
    arg = re.match(r"\S+ \((\w+)\)", meta.get("explanation") or "") if plan_.own else None
    only = f" if a == {arg.group(1)!r}" if arg and "triton" in (meta.get("explanation") or "") else ""
    lines = [line.replace("@ARG@", only) for k in kinds for line in _COPY_RULES[k]]
    return lines


def _notes(plan_: Plan, meta: dict[str, Any]) -> list[str]:
    root = meta.get("root") or {}
    stage = root.get("stage")
    _, words = stage_words(stage, plan_.pipeline)
    v = meta.get("versions") or {}
    found = f"torch {v.get('torch', '?')}" + (f", triton {v['triton']}" if plan_.cuda and v.get("triton") else "")
    exits = "1 the bug shows, 0 fixed" + (", 3 no GPU here" if plan_.cuda else "")
    named = stage if words == stage else f"{stage} ({words})"
    blamed = (f"Blamed stage: {named}, the first whose result departs from eager."
              if stage and not stage.startswith("unblamed") else
              "No stage blamed: cutting the pipeline stage by stage did not show it.")
    notes = [blamed, f"Found by aliasfuzz ({meta.get('id', 'an entry')}, {found}). Exit: {exits}."]
    if plan_.harness:
        notes += textwrap.wrap("HARNESS, not public API alone: " + plan_.harness + ".", 92,
                               break_on_hyphens=False)
    return notes


def _fx_comment(stage: str | None) -> str:
    return {
        "functionalization": "# blamed stage: make_fx(functionalize(f)) alone already departs from eager",
        "decomposition": "# blamed stage: make_fx tracing already departs from eager",
        "reinplace": "# blamed stage: torch.fx.passes.reinplace (functionalize alone agrees)",
    }.get(stage or "", "# no stage blamed")


def _parts(plan_: Plan) -> dict[str, Any]:
    from aliasfuzz.campaign import _repro_source as src

    imports, defs = src.definitions(plan_.program)
    return {
        "imports": imports,
        "definitions": defs,
        "function": src.function_source(plan_.program),
        "inputs": src.inputs_source(plan_.program, cuda=plan_.cuda),
        "optional": src.needs_optional(plan_.program),
        "triton": src.uses_triton(plan_.program),
    }


def program_text(program: Program, meta: dict[str, Any]) -> str:
    """The program part of ``repro.py`` (definitions, ``def f``, ``def inputs``) for the
    sighting :func:`plan` picks: what a report shows next to the repro."""
    parts = _parts(plan(program, meta))
    blocks = [parts["imports"] + parts["definitions"], parts["function"], parts["inputs"]]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_repro(program: Program, meta: dict[str, Any]) -> str:
    """The source text of ``repro.py`` for ``program`` and its corpus entry ``meta``.

    ``meta`` is the entry's ``meta.json`` (v2: ``root``, ``full``, ``hits``, ``expected``,
    ``explanation``, ``versions``, ``pipeline_options``, ``device``; a v1 meta works too,
    as one sighting with ``full`` unknown). Exit status of the script: 1 the bug shows,
    0 it does not (fixed), 3 it needs a GPU that is absent, 2 no standalone repro exists
    (a pipeline with no public equivalent, e.g. the fuzzer's debug pipelines).
    """
    import jinja2

    from aliasfuzz.campaign._repro_template import TEMPLATE

    p = plan(program, meta)
    if p.mode == "none":
        return (f'"""{title(meta)}\n\nNo standalone repro: pipeline {p.pipeline} exists only '
                f'inside aliasfuzz."""\nraise SystemExit(2)\n')
    check, what, want, got = _compare(p, meta)
    settings, compile_args = _inductor_settings(p)
    if check == "copies" and p.mode != "fx":  # a cached compiled graph would skip the pass
        settings.append("torch._inductor.config.force_disable_caches = True  # run the pass")
    script, calls, calls_note = "", 1, ""
    if p.mode == "jit":
        settings, script, calls, calls_note = _jit(p, meta)
    parts = _parts(p)
    imports = parts.pop("imports")
    if p.mode == "fastpath":
        imports = [*imports, "from torch._functorch.aot_autograd import make_boxed_func",
                   "from torch._inductor.compile_fx import _recursive_post_grad_passes, compile_fx"]
    if check == "copies" and p.mode != "fx":
        imports = [*imports, "from torch._inductor.fx_passes import post_grad"]
    if p.mode == "fx":
        imports = [*imports, "from torch.fx.experimental.proxy_tensor import make_fx",
                   "from torch.fx.passes.reinplace import reinplace"]
    compiled = {
        "compile": f'torch.compile(f, backend="{p.backend}"{compile_args})',
        "fastpath": "torch.compile(f, backend=lambda gm, ex: compile_fx(gm, ex, "
                    f"inner_compile=post_grad_only){compile_args})",
        "fx": "reinplace(gm, *b)",
    }.get(p.mode, "")
    stage = (meta.get("root") or {}).get("stage")
    setup = ([_fx_comment(stage), 'gm = make_fx(torch.func.functionalize(f), tracing_mode="fake")(*b)']
             if p.mode == "fx" else [])
    node = (meta.get("explanation") or "").split(" (")[0] if p.own else ""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    text = env.from_string(TEMPLATE).render(
        **parts, title=title(meta, p.pipeline), notes=_notes(p, meta), cuda=p.cuda,
        imports=imports, settings=settings, mode=p.mode, check=check, what=what, want=want,
        got=got, want_f='{' + want + '}', got_f='{' + got + '}', names=repr(tuple(t.name for t in p.program.inputs)), compiled=compiled,
        setup=setup, script=script, calls=calls, calls_note=calls_note,
        copy_rules=_copy_rules(meta, p), node=node,
        invariant=_first_line(meta.get("explanation") or "", 60),
    )
    if p.harness or len(text.splitlines()) <= MAX_LINES:
        return text
    return _compact(text)


def _compact(text: str) -> str:
    """``text`` squeezed until it fits :data:`MAX_LINES` lines: blank lines after the
    docstring go first (first ones first: Python needs none of them), then the
    docstring's blank line, then its two note lines become one."""
    doc, sep, rest = text.partition('"""\n')  # the docstring's closing quotes
    lines = rest.splitlines()
    over = len(text.splitlines()) - MAX_LINES
    for k, line in enumerate(lines):
        if over > 0 and not line.strip():
            lines[k], over = None, over - 1
    doc_lines = doc.split("\n")
    if over > 0 and len(doc_lines) > 2 and not doc_lines[1].strip():
        del doc_lines[1]
        over -= 1
    if over > 0 and len(doc_lines) == 3:
        doc_lines[1:] = [doc_lines[1] + " " + doc_lines[2]]
    return "\n".join(doc_lines) + sep + "\n".join(x for x in lines if x is not None) + "\n"

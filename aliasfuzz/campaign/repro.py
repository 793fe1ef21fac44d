"""Standalone ``repro.py`` for a corpus entry: public PyTorch API, fit for an upstream report.

A repro is the minimized program (custom ops and Triton kernels inlined,
:mod:`._repro_source`), its inputs with exact layouts (``torch.as_strided`` over storages
built explicitly), one way of compiling it, and the comparison the finding needs; it
prints the versions, exits 1 when the bug shows, 0 when it does not ("fixed"), and 3 with
``CANNOT RUN HERE: needs a GPU`` when the program needs CUDA (user Triton kernels, a
CUDA finding) and there is none. Nothing in it imports aliasfuzz.

How it compiles (:func:`plan`): the entry's root cause may have been hit through several
pipelines (``meta["hits"]``, each with its minimized program); the repro takes the hit
with the most public way to show it, in this order (a sighting where a value differs
goes before one that differs only in output aliasing, whatever its way; hits of one row
show the same way, the entry's own program first: fresh user 53's B3, a campaign's
``inductor`` hit of another program replaced the ``inductor-reinplace`` one that
``torch.compile`` reproduced):

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

from aliasfuzz.campaign._repro_frames import (
    compare,
    copy_rules,
    fx_comment,
    inductor_settings,
    jit_settings,
)
from aliasfuzz.campaign._repro_template import BROKE
from aliasfuzz.campaign._repro_words import (
    control_agrees,
    effect,
    first_line,
    intermediate_alias,
    known_lines,
    order_dependent,
    output_metadata,
    overlap_refusal,
    stage_words,
    title,
    trail_rows,
)
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.grads import has_grad_inputs
from aliasfuzz.fuzz.ir import Program

__all__ = [
    "MAX_LINES", "Plan", "cost_blame", "effect", "head", "plan", "program_text", "render_plan",
    "render_repro", "spells_witness", "stage_words", "title",
]

#: Line budget of a repro that needs no harness (issue 13).
#: the line budget of a public repro; an ``aliasing`` repro spends 15 of them showing what
#: the shared storage does to a caller (the outputs that change when each input or output
#: is written after the call), and a repro of another sighting than program.json's 2 saying so;
#: 2 more since a repro tells a broken run from the bug (fresh users 31 and 32: the exit-125
#: hook, and a check that the out-of-bounds view check was installed)
MAX_LINES = 52

#: pipeline -> (rank, mode, backend): lower ranks are more public ways to reproduce.
_WAYS: dict[str, tuple[int, str, str | None]] = {
    "aot_eager": (0, "compile", "aot_eager"),
    "inductor": (1, "compile", "inductor"),
    "fx-reinplace": (3, "fx", None),
    "torchscript": (4, "jit", None),
}
# inductor-reinplace that full torch.compile reproduces: the same way as inductor's own hit
_FAST = (1, "compile", "inductor")
_HARNESS = (5, "fastpath", None)

@dataclass(frozen=True)
class Plan:
    """How a repro shows a finding: which sighting, and how it compiles and compares.

    ``program``/``pipeline``/``verdict``/``check``: the chosen sighting (``own``: it is the
    entry's own program, so the entry's explanation and diff describe it); ``mode``:
    ``compile`` / ``fastpath`` / ``fx`` / ``jit`` / ``none``; ``backend``: the
    ``torch.compile`` backend of ``compile``; ``harness``: why the repro needs more than
    public API ("" when it does not); ``cuda``: the program needs a GPU; ``explanation``:
    the oracle's explanation of that sighting ("" for an older hit that did not keep one);
    ``described``: the entry's ``expected`` and ``explanation`` describe it (its own program,
    judged by the same check).
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
    explanation: str = ""
    described: bool = True

    def sighting(self) -> dict[str, Any] | None:
        """The chosen hit for :func:`title` (None: the entry's ``expected`` and
        ``explanation`` describe it)."""
        if self.described:
            return None
        return {"verdict": self.verdict, "check": self.check, "explanation": self.explanation}


def _sightings(program: Program, meta: dict[str, Any]) -> list[tuple[Program, dict[str, Any], bool]]:
    exp = meta.get("expected") or {}
    own = {"pipeline": exp.get("pipeline", "inductor"), "verdict": exp.get("verdict"),
           "check": exp.get("check"), "full": meta.get("full")}
    from aliasfuzz.campaign.corpus import hit_program

    out = [(program, own, True)]
    text, own_json = program.dumps(), program.to_json()
    hits = meta.get("hits") or []
    for h in hits:
        try:
            p = Program.from_json(hit_program(h, own_json, hits))
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
    the most public way to reproduce (see the module table; one where a value differs
    before one where only output aliasing does; a sighting recorded unshrunk, ``known_first``,
    after every shrunk one), the entry's own program first among equals, then the smallest."""
    from aliasfuzz.campaign._repro_source import uses_triton

    def key(s):
        p, h, own = s
        # a known-first sighting is the program as found, never minimized (pool._known_first):
        # any shrunk sighting goes first, whatever its way
        return (h.get("check") == "aliasing", bool(h.get("known_first")) and not own,
                _way(str(h.get("pipeline")), h.get("full"))[0], not own, len(p.body))

    p, h, own = min(_sightings(program, meta), key=key)
    pipeline = str(h.get("pipeline"))
    verdict = str(h.get("verdict") or (meta.get("expected") or {}).get("verdict"))
    _, mode, backend = _way(pipeline, h.get("full"))
    if mode == "fx" and verdict == "missed-reinplace":
        harness = ""  # the reinplaced FX graph is public: its node shows the decision
    else:
        harness = _harness_reason(mode, verdict, h.get("full"))
    cuda = uses_triton(p) or str(meta.get("device", "cpu")).startswith("cuda")
    # a hit's own options (dynamic shapes: --dynamic-share), else the entry's for its program
    options = dict(h["pipeline_options"] if isinstance(h.get("pipeline_options"), dict)
                   else meta.get("pipeline_options") or {} if own else {})
    exp = meta.get("expected") or {}
    described = own and h.get("check") == exp.get("check") and verdict == exp.get("verdict")
    said = str((meta if described else h).get("explanation") or "")
    return Plan(p, pipeline, verdict, h.get("check"), mode, backend, cuda, own, harness, options,
                said, described)


def pass_off_move(meta: dict[str, Any], stage: str | None) -> tuple[str, bool] | None:
    """``(cut, own_off)`` when the pass-off control moved entry ``meta``'s blame to
    ``stage`` (:func:`aliasfuzz.oracle.blame.pass_off`: the cut blamed ``cut``, and the
    pipeline agreed with eager with ``stage`` disabled; ``own_off``: disabling ``cut``
    itself did not help); None when ``stage`` is the cut's own blame. Read from the meta's
    ``moved_by_pass_off`` (null: not moved)."""
    if "moved_by_pass_off" in meta:
        moved = meta["moved_by_pass_off"]
        return None if not moved or not stage else (str(moved["cut"]), bool(moved["own_off"]))
    # an entry written before the key: its trail's words are the only record of the move
    return moved_by_pass_off(meta.get("trail") or [], stage)


def moved_by_pass_off(trail: list[Any], stage: str | None) -> tuple[str, bool] | None:
    """:func:`pass_off_move` parsed from the words of a blame's ``trail``, for an entry
    whose meta predates ``moved_by_pass_off``: the last ``pass-off`` line, "CUT disabled:
    departs; STAGE disabled: agrees" (``own_off``) or "CUT departs; STAGE disabled:
    agrees"."""
    said = next((str(what) for st, what in reversed(trail) if st == "pass-off"), "")
    if not stage or "blame stands" in said or not said.endswith(f"; {stage} disabled: agrees"):
        return None
    cut = said.split(" ", 1)[0]
    return (cut, said.startswith(f"{cut} disabled: departs")) if cut != stage else None


def _notes(plan_: Plan, meta: dict[str, Any]) -> list[str]:
    from aliasfuzz.oracle.blame import (
        ALSO_FIXED_BY,
        AUTO_FUNCTIONALIZED_V2,
        DONATED_BUFFER,
        ENABLED_BY,
        ENABLED_BY_DYNAMO,
        ERROR_GONE,
        EXPOSED_BY,
        RAISED_IN,
        STATIC_SHAPES,
        SYNTHETIC_BASE,
        pass_name,
    )

    root = meta.get("root") or {}
    stage = root.get("stage")
    _, words = stage_words(stage, plan_.pipeline)
    v = meta.get("versions") or {}
    found = f"torch {v.get('torch', '?')}" + (f", triton {v['triton']}" if plan_.cuda and v.get("triton") else "")
    if not plan_.cuda and v.get("threads"):  # a CPU kernel may need several threads to fail
        found += f", {v['threads']} CPU thread{'' if v['threads'] == '1' else 's'}"
    # 125's meaning is the first code line's comment; 2 is listed for bisect scripts (fresh
    # user 52's B4), in place of words that would push a repro past MAX_LINES
    exits = "1 the bug shows, 0 fixed" + (", 3 no GPU here" if plan_.cuda else "") + \
        ", 125 it broke, 2 no torch"
    named = stage if words == stage else f"{stage} ({words})"
    stages = [str(x) for x in meta.get("stages") or [] if x]
    moved = pass_off_move(meta, stage)
    od = order_dependent(meta)
    if (not stage or stage.startswith("unblamed")) and meta.get("blame_reason") and \
            not meta.get("trail"):  # not cut at all: say why (a cost or gradient finding)
        blamed = f"No stage blamed, not cut stage by stage: {meta['blame_reason']}."
    elif not stage or stage.startswith("unblamed"):
        blamed = "No stage blamed: cutting the pipeline stage by stage did not show it."
    elif plan_.check == "candidates" and plan_.verdict in ("missed-reinplace", "unsafe-reinplace"):
        # a claim about the pass's own decision: its values need not depart (fresh user 30)
        blamed = f"Blamed stage: {named}, whose own decision the claim is about (not cut)."
    elif moved:
        cut, own_off = moved
        # its own cut agrees: "the first whose result departs" was false (audit 34, 4aa908be16)
        blamed = (f"Blamed stage: {named}, by the pass-off control: the result first departs "
                  f"from eager after {cut}, and disabling {stage} removes that departure"
                  + (f" while disabling {cut} does not" if own_off else "")
                  + f" ({stage}'s own graph still gives eager's values: a later stage "
                  "exposes what it did).")
    elif stage == DONATED_BUFFER:  # named by a control: no cut of its own departs
        # fresh user 50: "the forward is unchanged" read as "its results are right", and the
        # setting alone raised AttributeError without its import
        blamed = (f"Blamed stage: {named}, by its control: the compiled forward leaves the "
                  "input right and the compiled backward overwrites it; with donated buffers "
                  "off (import torch._functorch.config; torch._functorch.config.donated_buffer "
                  "= False) it agrees with eager.")
    elif stages and stages[0] != stage:  # a stacked bug: this root is a later stage's own
        blamed = (f"Blamed stage: {named}, which adds a departure of its own to a result that "
                  f"already departs from eager after {stages[0]} (blamed apart).")
    elif od:
        # its graph, run eagerly, gives eager's values: "departs" read as an observed
        # difference where it is a write with no single meaning (audit 53, f132a3c672)
        blamed = (f"Blamed stage: {named}, the first whose graph has no single meaning (one op "
                  "writes a storage element twice with different values; run eagerly, it gives "
                  "eager's values).")
    else:
        blamed = f"Blamed stage: {named}, the first whose result departs from eager."
        if len(stages) > 1:
            blamed += f" Later stages add departures of their own: {', '.join(stages[1:])}."
    dynamic = ""
    if plan_.options.get("dynamic") and plan_.mode in ("compile", "fastpath"):
        # audit 53, 0fe554f63b: a symbolic size that is 1 at run time was the bug; the
        # docstring did not say the program was compiled with dynamic shapes
        dynamic = "Found with dynamic shapes: the script compiles with dynamic=True"
        static = next(iter(trail_rows(meta, STATIC_SHAPES)), "")
        # audit 53: that dynamic=True was essential was the auditor's own control
        front = re.search(r"; on aot_eager \(the same ([^)]+)\): agrees$", static)
        dynamic += (f"; with dynamic=False aot_eager (the same {front[1]}) agrees with eager "
                    "(Inductor's control could not run where it was found)." if front
                    else "; with dynamic=False it agrees with eager." if static.endswith(": agrees")
                    else "; it departs with dynamic=False too." if static.endswith(": departs")
                    else ".")
    notes = textwrap.wrap(blamed, 92, break_on_hyphens=False) if moved or stage == DONATED_BUFFER \
        or od else [blamed]
    notes += textwrap.wrap(dynamic, 92, break_on_hyphens=False)
    raised_in = next(iter(trail_rows(meta, RAISED_IN)), None)
    if raised_in and stage and raised_in.startswith(SYNTHETIC_BASE):
        # the stage is AOTAutograd's, and the op it traced is its own (audit 46, ddd5e9100d)
        notes += textwrap.wrap(
            f"It was raised in {raised_in}: graph inputs alias one another and one of them is "
            "mutated, so AOTAutograd traces the graph over one base and regenerates each input "
            "as a view of it.", 92, break_on_hyphens=False)
    elif raised_in and stage and not stage.startswith("unblamed"):
        # the stage is full Inductor; the component tells which part of it to read (audit 22)
        notes += textwrap.wrap(f"Inductor raised it in its {raised_in}.", 92,
                               break_on_hyphens=False)
    gone = [r for r in trail_rows(meta, ENABLED_BY) if r.startswith(ERROR_GONE)]
    if stage and (control_agrees(meta, ENABLED_BY) or gone):
        # the cut blames where it broke; that the pass made the graph is the other half
        # (audit 38, 0a4e0624e7: "it raises in lowering only because reinplace ...")
        mishandles = (f"{stage} mishandles a graph only the pass makes" if stage != DONATED_BUFFER
                      else "the forward saves a tensor on the input's storage, which the "
                      "backward, told it is free (bw_donated_idxs), reuses")
        # audit 51, ecaa4998b9: on CPU a user Triton kernel's codegen stops the control
        # after the crash's place; the crash is gone, agreement is not shown
        off = ("the program compiles and agrees with eager" if not gone else
               "the error is gone, and the compile goes on until a documented refusal stops it ("
               + gone[0].split(" refusal (", 1)[-1].split("), so ", 1)[0]
               + "), so agreement with eager is not shown here")
        notes += textwrap.wrap(
            f"It needs Inductor's reinplace pass: with the pass disabled (disabled_passes "
            f"REINPLACE_INPLACEABLE_OPS) {off}, while the "
            f"pass's own graph runs right eagerly: {mishandles}.",
            92, break_on_hyphens=False)
    if stage and control_agrees(meta, ENABLED_BY_DYNAMO):
        # the program has no fma; Dynamo wrote one in its place (audit 48, baa68a8925)
        notes += textwrap.wrap(
            "It needs Dynamo's own rewrite of the call (torch._dynamo.config."
            "enable_dynamo_decompositions: addcmul_/addcdiv_ with value= become "
            "inductor_prims.fma): with it off the program compiles and agrees with eager, while "
            f"Dynamo's graph runs right eagerly: {stage} mishandles the ops Dynamo wrote.",
            92, break_on_hyphens=False)
    v2 = next(iter(trail_rows(meta, AUTO_FUNCTIONALIZED_V2)), "")
    if stage and v2.endswith(": agrees"):
        # audit 57, 502df9d4e6: the custom op's lost write needed v2, which the repro hid
        notes += textwrap.wrap(
            "It needs AOTAutograd's auto_functionalized_v2 (torch._inductor.config."
            "enable_auto_functionalized_v2, on by default), which regenerates a custom op's "
            "mutated arguments from their bases: with it False (the v1 wrapper, which copies "
            "them) the program agrees with eager.", 92, break_on_hyphens=False)
    elif stage and v2.endswith(": departs"):
        notes += textwrap.wrap("It departs with torch._inductor.config."
                               "enable_auto_functionalized_v2 = False too.", 92,
                               break_on_hyphens=False)
    lost = output_metadata(meta) if stage else None
    if lost:
        # audit 56, 0e76bd01f8: "functionalization" read as its kernels; the alias was
        # lost where AOTAutograd classifies the outputs
        notes += textwrap.wrap(
            f"The functional graph cannot return an alias of an input: AOTAutograd's runtime "
            f"wrappers regenerate one from the input where its output metadata says so, and "
            f"that metadata (collect_metadata_analysis, torch/_functorch/_aot_autograd) "
            f"classifies {lost} as a fresh output (non_alias): look there first.",
            92, break_on_hyphens=False)
    if stage and intermediate_alias(meta):
        # audit 52, 1e3744d1cf: "lowering" was blamed where the views' values are right and
        # AOTAutograd had told the backend the outputs were fresh
        notes += textwrap.wrap(
            "AOTAutograd's output metadata has these views of one intermediate fresh "
            "(non_alias: it tracks intermediate bases only for outputs requiring grad), so the "
            "backend may return them apart.", 92, break_on_hyphens=False)
    rows = trail_rows(meta, EXPOSED_BY)
    exposed = [r.split(" disabled:", 1)[0] for r in rows
               if r.split(" disabled: ", 1)[-1].startswith("agrees")]
    if exposed and stage:
        # the pass that made Inductor's write order differ; the audit found it by hand
        notes += textwrap.wrap(
            f"With {exposed[0]} disabled (disabled_passes {pass_name(exposed[0])}) it agrees "
            f"with eager: that pass changes the order Inductor's code writes in; the blame "
            f"stays on {stage}.", 92, break_on_hyphens=False)
    elif stage and rows and rows[0].startswith("no pass's control agrees ("):
        tried = rows[0].split("(", 1)[1].split(")", 1)[0]
        notes += textwrap.wrap(
            f"Disabling the Inductor passes after it ({tried}) does not remove it: Inductor's "
            "own code writes in another order than eager.", 92, break_on_hyphens=False)
    also = [str(what).split(" disabled:", 1)[0] for st, what in meta.get("trail") or []
            if st == ALSO_FIXED_BY and str(what).split(": ", 1)[-1].startswith("agrees")]
    if also and stage:
        # two controls remove it; naming one hid the other pass's part (audit 38)
        notes += textwrap.wrap(
            f"Disabling {' or '.join(also)} removes it too (disabled_passes "
            f"{', '.join(sorted({str(pass_name(a)) for a in also}))}): both passes take part; "
            f"the blame stays on {stage}, whose graph is the first that departs from eager.",
            92, break_on_hyphens=False)
    notes += textwrap.wrap(f"Found by aliasfuzz ({meta.get('id', 'an entry')}, {found}). Exit: {exits}.",
                           92, break_on_hyphens=False)
    silent = _silent_sighting(plan_, meta)
    if silent:  # audit 51, baa68a8925: the crash hid a wrong dtype computed without an error
        notes += textwrap.wrap(f"Filed with it as one root cause: wrong results without an error "
                               f"({silent}).", 92, break_on_hyphens=False)
    if not plan_.own:  # an auditor compared this program with program.json and was puzzled
        notes += textwrap.wrap(
            f"Shown by another sighting ({plan_.pipeline}), the most public one; program.json "
            "holds the entry's own program.", 92, break_on_hyphens=False)
    # the shown sighting's own measure: another program's bytes would describe another
    # program (fresh user of e55a8df, 28782ce57a); a sighting that kept none prints none
    cost = _COST.search(plan_.explanation) if plan_.verdict == "missed-reinplace" else None
    if cost:  # the measured cost is the claim; the one-line summary above cuts it off
        # an entry of old names no count: its figures are the loop extents' (fresh user 38's
        # B5 looked for them in what the script prints, Inductor's own count)
        said = cost.group(0) if "loop-extent" in cost.group(0) else cost.group(0).replace(
            " per call (", " per call by the loop-extent count (", 1)
        prints = (" The script prints Inductor's own count of f's code (torch._inductor.metrics) "
                  "and the copies the pass left." if plan_.mode != "fx" else "")
        notes += textwrap.wrap("Cost: " + said + " (oracle/confirm.py measure_excess)." + prints,
                               92, break_on_hyphens=False)
    known = known_lines(meta, plan_.sighting())
    if len(known) > 1:  # why the known bug is one, when it explains the observable shown
        notes += textwrap.wrap("Why it is a bug: " + known[1], 92, break_on_hyphens=False)
    elif plan_.own and (refused := overlap_refusal(meta, plan_.program)):
        # PyTorch's error calls the program ill-defined (fresh user 55's B3)
        notes += textwrap.wrap("Why it is a bug: " + refused, 92, break_on_hyphens=False)
    if plan_.harness:
        notes += textwrap.wrap("HARNESS, not public API alone: " + plan_.harness + ".", 92,
                               break_on_hyphens=False)
    return notes


def _silent_sighting(plan_: Plan, meta: dict[str, Any]) -> str | None:
    """``<pipeline>, hit k of meta.json: <first line>`` of the first ``miscompile`` hit of an
    entry whose repro shows a crash, or None. A silent wrong result is the graver face of
    one root cause, and a reader of the crash's repro would not learn of it (audit 51,
    baa68a8925: an int8 view's ``addcmul_`` crashes lowering, an int64 one silently comes
    back float32; both are Dynamo's ``fma`` rewrite)."""
    if plan_.verdict != "crash":
        return None
    for k, h in enumerate(meta.get("hits") or ()):
        said = first_line(str(h.get("explanation") or ""), 100)
        if h.get("verdict") == "miscompile" and said:
            return f"{h.get('pipeline')}, hit {k} of meta.json: {said}"
    return None


#: The cost sentence of a measured missed reinplace (oracle.confirm.Excess.message).
_COST = re.compile(r"Inductor's generated code moves .*?-byte tensor(?:; it allocates .*? dropped)?")


def head(meta: dict[str, Any], plan_: Plan) -> str:
    """The first line(s) of ``repro.py``'s docstring: ``known upstream: <issue> — <title>``
    for a known upstream bug, then the claim (:func:`title` of the sighting shown)."""
    known = known_lines(meta)
    claim = title(meta, plan_.pipeline, plan_.sighting())
    return f"{known[0]}\n{claim}" if known else claim


def _parts(plan_: Plan) -> dict[str, Any]:
    from aliasfuzz.campaign import _repro_source as src

    imports, defs = src.definitions(plan_.program)
    return {
        "imports": imports,
        "definitions": defs,
        # make_fx captures a user kernel only through wrap_triton: the fx repro spells it so
        "function": src.function_source(plan_.program, capture_triton=plan_.mode == "fx"),
        "inputs": src.inputs_source(plan_.program, cuda=plan_.cuda),
        "optional": src.needs_optional(plan_.program),
        "triton": src.uses_triton(plan_.program),
    }


def program_text(program: Program, meta: dict[str, Any]) -> str:
    """The program part of ``repro.py`` (imports, definitions, ``def f``, ``def inputs``)
    for the sighting :func:`plan` picks: what a report shows next to the repro; executing
    it defines ``f`` and ``inputs`` (on a GPU when the program needs one)."""
    parts = _parts(plan(program, meta))
    head = ["from typing import Optional"] * parts["optional"] + ["import torch", *parts["imports"]]
    blocks = [head + parts["definitions"], parts["function"], parts["inputs"]]
    return "\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def render_repro(program: Program, meta: dict[str, Any]) -> str:
    """The source text of ``repro.py`` for ``program`` and its corpus entry ``meta``.

    ``meta`` is the entry's ``meta.json`` (v2: ``root``, ``full``, ``hits``, ``expected``,
    ``explanation``, ``versions``, ``pipeline_options``, ``device``; a v1 meta works too,
    as one sighting with ``full`` unknown). Exit status of the script: 1 the bug shows,
    0 it does not (fixed), 3 it needs a GPU that is absent, 2 no standalone repro exists
    (a pipeline with no public equivalent, e.g. the fuzzer's debug pipelines).
    """
    p = plan(program, meta)
    if p.mode == "none":
        return (f'"""{title(meta)}\n\nNo standalone repro: pipeline {p.pipeline} exists only '
                f'inside aliasfuzz."""\nraise SystemExit(2)\n')
    if is_witness(p):  # a cost claim: the kept-copy harness below would not test it
        text = witness_repro(p, meta)
        if text is not None:
            return text
        return (f'"""{title(meta)}\n\nNo standalone repro: the witness spelling named in the '
                'explanation is not a statement of the repro\'s f."""\nraise SystemExit(2)\n')
    return render_plan(p, meta, _parts(p), tuple(t.name for t in p.program.inputs))


def _toggled_tensors(p: Plan) -> tuple[int, ...]:
    """Positions of the optional inputs TorchScript's pipeline passes as ``None`` on odd
    calls (``passes.torchscript.call_variants``: script mode, ``toggle_optional`` on, a
    toggleable input given as a tensor on call 0). Audit 51, 30c2059388: the repro passed
    the tensor on every call and exited 0, the bug needing ``None``. An input the program
    gives as ``None`` (a tensor on odd calls) is not shown: ``()`` then."""
    from aliasfuzz.fuzz.optional import toggleable

    o = p.options.get("torchscript") or {}
    if o.get("mode", "script") != "script" or not o.get("toggle_optional", True):
        return ()
    flip = set(toggleable(p.program))
    if any(t.none for t in p.program.inputs if t.name in flip):
        return ()
    return tuple(k for k, t in enumerate(p.program.inputs) if t.name in flip)


def render_plan(p: Plan, meta: dict[str, Any], parts: dict[str, Any], names: tuple[str, ...]) -> str:
    """``repro.py`` of plan ``p`` (mode ``compile``, ``fastpath``, ``fx`` or ``jit``) whose
    program part is ``parts`` (as :func:`_parts` returns: ``imports``, ``definitions``,
    ``function`` defining ``f``, ``inputs`` defining ``inputs()``, ``optional``,
    ``triton``) and whose inputs are named ``names``: the corpus's programs and
    ``aliasfuzz check``'s case files (:mod:`._repro_case`) share it."""
    import jinja2

    from aliasfuzz.campaign._repro_template import TEMPLATE
    from aliasfuzz.oracle.heap import OUT_OF_BOUNDS

    check, what, want, got = compare(p, meta)
    settings, compile_args = inductor_settings(p)
    if (check == "copies" and p.mode != "fx") or p.mode == "fastpath" or (
            p.mode == "compile" and p.backend == "inductor"):
        # A cached graph is served without running the passes under test, and one cached
        # by another spelling (other input aliasing, same shapes) can fail on its own
        # (twelfth audit, wave B): torch.compiler's public switch turns every cache off.
        settings.append("torch.compiler.config.force_disable_caches = True  # run the passes")
    if p.mode in ("compile", "fastpath"):
        # with TORCHDYNAMO_SUPPRESS_ERRORS=1 set, a compile error falls back to eager and a
        # crash repro said "fixed" (fresh user 32's B4)
        settings.append("torch._dynamo.config.suppress_errors = False  # an error is not eager")
    script, calls, calls_note, toggle = "", 1, "", ()
    if p.mode == "jit":
        settings, script, calls, calls_note = jit_settings(p, meta)
        toggle = _toggled_tensors(p) if calls > 1 else ()
    parts = dict(parts)
    imports = parts.pop("imports")
    if p.mode == "fastpath":
        imports = [*imports, "import operator",
                   "from torch._functorch.aot_autograd import make_boxed_func",
                   "from torch._inductor.compile_fx import _recursive_post_grad_passes, compile_fx"]
        if p.check == "grads":  # the backward graph is compiled lazily, outside compile_fx's fake mode
            imports += ["from torch._guards import detect_fake_mode",
                        "from torch._inductor.virtualized import V"]
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
    setup = ([fx_comment(stage), 'gm = make_fx(torch.func.functionalize(f), tracing_mode="fake")(*b)']
             if p.mode == "fx" else [])
    node = (meta.get("explanation") or "").split(" (")[0] if p.own else ""
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined)
    text = env.from_string(TEMPLATE).render(
        **parts, title=head(meta, p), notes=_notes(p, meta), cuda=p.cuda, broke=BROKE,
        imports=imports, settings=settings, mode=p.mode, check=check, what=what, want=want,
        got=got, want_f="{" + want + "}", got_f="{" + got + "}", compiled=compiled,
        names=repr(tuple(names)),
        setup=setup, script=script, calls=calls, calls_note=calls_note, toggle=toggle,
        copy_rules=copy_rules(meta, p), node=node,
        # a finding shown by a view past its storage in Inductor's wrapper (oracle.heap):
        # the repro checks each view as the wrapper makes it, and exits 1 at that one,
        # whether or not glibc would notice the write
        oob=p.mode == "compile" and p.backend == "inductor" and p.check == OUT_OF_BOUNDS,
        invariant=first_line(meta.get("explanation") or "", 60),
        # a signal death (the worker died running it): the script runs itself in a child
        # so that it exits 1, not 134 (ninth campaign's second audit, 2c48f208a2); so does
        # a crash under Inductor's generated code, which may write out of bounds instead of
        # raising (twelfth audit wave H, 6210c968b2: "fixed", then glibc's abort at exit)
        # (the number of child runs: 5 for a death, which a heap corruption does not cause
        # on every run; 1 for a crash, whose exception is deterministic)
        died=5 if str(p.check or "").startswith("signal:") else (
            1 if check == "crash" and p.mode == "compile" and p.backend == "inductor" else 0),
        # a TorchScript frontend bug shows in the scripted graph itself (eleventh audit wave A:
        # a dropped _foreach_add_ leaves `return None`)
        frontend=(meta.get("root") or {}).get("stage") == "ts-frontend",
        # a gradient finding (a departure or a crash of the backward): the repro runs it;
        # so does a value finding of a program whose inputs require grad, since the fuzzer
        # compared them after its backward (campaign 25, 94644fc8c5: the repro without it
        # said "fixed" for a backward that overwrote the leaf)
        # a storage with elements no input views: a misplaced write may land there (audit
        # 46, 83405e5770: the custom op wrote storage elements 0 and 3, outside x0), which
        # comparing the inputs does not show; the failure message lists them
        outside=check in ("inputs", "both") and _unviewed(p.program),
        backward=p.mode in ("compile", "fastpath") and (p.check == "grads" or (
            check in ("values", "inputs", "both") and has_grad_inputs(p.program))),
    )
    if p.harness or len(text.splitlines()) <= MAX_LINES:
        return text
    return _compact(text)


def _compact(text: str) -> str:
    """``text`` squeezed until it fits :data:`MAX_LINES` lines: blank lines after the
    docstring go first (first ones first: Python needs none of them), then comment lines
    (the docstring names the blamed stage too), then a known bug's wrapped why becomes one
    line, then the docstring's blank line, then its two note lines become one."""
    doc, sep, rest = text.partition('"""\n')  # the docstring's closing quotes
    lines = rest.splitlines()
    over = len(text.splitlines()) - MAX_LINES
    for drop in (lambda x: not x.strip(), lambda x: x.strip().startswith("#")):
        for k, line in enumerate(lines):
            if over > 0 and line is not None and drop(line):
                lines[k], over = None, over - 1
    doc_lines = doc.split("\n")
    why = next((k for k, x in enumerate(doc_lines) if x.startswith("Why it is a bug: ")), None)
    if over > 0 and why is not None and why + 1 < len(doc_lines):  # the why: one line
        over -= len(doc_lines) - 1 - why
        doc_lines[why:] = [" ".join(doc_lines[why:])]
    blank = next((k for k, x in enumerate(doc_lines) if k and not x.strip()), None)
    if over > 0 and blank is not None:  # the blank line after the claim (one or two lines)
        del doc_lines[blank]
        over -= 1
    found = next((k for k, x in enumerate(doc_lines) if x.startswith("Found by aliasfuzz")), None)
    if over > 0 and found:  # the blamed-stage note and the found-by note: one line
        doc_lines[found - 1:found + 1] = [doc_lines[found - 1] + " " + doc_lines[found]]
    return "\n".join(doc_lines) + sep + "\n".join(x for x in lines if x is not None) + "\n"


def _unviewed(program: Program) -> bool:
    """Whether some input storage of ``program`` has an element that no input views (an
    input with an offset, a gap between strided rows, a tail past the last view)."""
    from aliasfuzz.fuzz.ops.overlap import elements

    reach: dict[str, set[int]] = {s.name: set() for s in program.storages}
    for t in program.inputs:
        reach.setdefault(t.storage, set()).update(elements(t).tolist())
    return any(len(reach.get(s.name, ())) < s.numel for s in program.storages)


#: The witness of a ``missed-reinplace`` of check ``witness`` in its explanation
#: (:meth:`aliasfuzz.oracle.witness.Witness.message`).
_WITNESS = re.compile(r"witness (?P<rule>[\w-]+): `(?P<original>.+?)` spelled `(?P<spelled>.+?)` gives")


def witness_function(function: list[str], explanation: str) -> tuple[str, list[str]] | None:
    """``(rule, def f_witness lines)``: ``function`` (``def f`` lines) spelled as the
    explanation's witness says (``graph-split``: a ``torch._dynamo.graph_break()`` after the
    original statement; ``augmented-setitem``: the statement replaced by its view's in-place
    op). None when the explanation names no witness or its statement is not in ``f``."""
    m = _WITNESS.search(explanation)
    if m is None:
        return None
    from aliasfuzz.campaign._repro_source import _rename

    # the repro renames the fuzzer's custom-op namespace as f's source does (a witness on a
    # custom op's line fell back to the kept-copy harness: eighteenth hand check, a61e62ccb5)
    rule, original, spelled = m.group("rule"), _rename(m.group("original")), _rename(m.group("spelled"))
    out, done = [function[0].replace("def f(", "def f_witness(", 1)], False
    for line in function[1:]:
        indent = line[: len(line) - len(line.lstrip())]
        if not done and line.strip() == original:
            done = True
            if rule == "graph-split":
                out += [line, f"{indent}torch._dynamo.graph_break()  # the witness: two graphs"]
            elif rule == "augmented-setitem":
                out.append(f"{indent}{spelled}  # the witness: was {original}")
            else:
                return None
            continue
        out.append(line)
    return (rule, out) if done else None


#: The witness repros' comparison of f's and f_witness's results with eager's.
_WITNESS_SAME = """def same(a, b):
    try:
        for x, y in zip(a, b, strict=True):
            if isinstance(x, torch.Tensor):
                torch.testing.assert_close(y, x)
            else:
                assert x == y
    except (AssertionError, ValueError):
        return False
    return True
"""


def _witness_notes(meta: dict[str, Any], rule: str, claim: str) -> list[str]:
    """The docstring lines of a witness repro: where it was found, its exit codes, and the
    cost ``claim`` (a sentence) with what the blame said of it."""
    return [*textwrap.wrap(
                f"Found by aliasfuzz ({meta.get('id', 'an entry')}, torch "
                f"{(meta.get('versions') or {}).get('torch', '?')}). Exit: 1 the bug shows, 0 fixed, "
                "4 no claim (f or f_witness compiled no longer gives eager's values), 125 it broke "
                "(an exception outside the check), 2 no torch.", 92, break_on_hyphens=False),
            *textwrap.wrap(f"A cost claim ({rule}): f and f_witness compute the same values; "
                           f"{claim} {cost_blame(meta)}", 92, break_on_hyphens=False)]


def _witness_head(parts: dict[str, Any], *imports: str) -> list[str]:
    """The imports and settings a witness repro starts with (``imports``: its own extra
    ``from torch ... import`` lines): caches off, Inductor's metrics log on."""
    return ["from typing import Optional"] * parts["optional"] + [
        "import logging", *BROKE, "import torch", *parts["imports"],
        "from torch._inductor import metrics", *imports,
        "from torch.utils._pytree import tree_leaves", "",
        "torch.compiler.config.force_disable_caches = True  # run the passes",
        "# Inductor counts the bytes each compiled graph moves when its metrics log is on",
        'logging.getLogger("torch._inductor.compile_fx.__inductor_metrics").setLevel(logging.INFO)']


def _witness_text(p: Plan, meta: dict[str, Any], notes: list[str], blocks: list[list[str]]) -> str:
    """A witness repro's text: the docstring of ``notes`` (with the dynamic-shapes note of
    :func:`_witness_dynamic`), then ``blocks`` (the last one the ``run`` block)."""
    blocks = [*blocks[:-1], [_witness_dynamic(blocks[-1][0], p, notes)]]
    doc = f'"""{head(meta, p)}\n\n' + "\n".join(notes) + '"""'
    return doc + "\n" + "\n\n\n".join("\n".join(b) for b in blocks if b) + "\n"


def _witness_dynamic(run: str, p: Plan, notes: list[str]) -> str:
    """A witness repro's ``run`` block compiling as the finding's sighting did: with
    ``dynamic=True`` when it was found with dynamic shapes (audit 57, dfe6def6b6: found
    dynamic, its repro compiled static), said in ``notes``."""
    if not p.options.get("dynamic"):
        return run.replace('"inductor"DYNAMIC', '"inductor"')
    notes.append("Found with dynamic shapes: the script compiles f and f_witness with dynamic=True.")
    return run.replace('"inductor"DYNAMIC', '"inductor", dynamic=True')


def _temporaries_repro(p: Plan, meta: dict[str, Any], parts: dict[str, Any], rule: str,
                       witness: list[str]) -> str:
    """``repro.py`` of a witness leaner by its temporaries (:func:`aliasfuzz.oracle.witness.
    witness_temporaries`): compiles ``f`` and ``f_witness`` with Inductor, reads each one's
    generated code (``torch._inductor.utils.run_and_get_code``) and sums the buffers its
    ``call`` allocates and does not return (:func:`aliasfuzz.passes.cost.code_temporaries`,
    whose source the repro carries); exits 1 when ``f``'s code allocates more, 0 when not
    (fixed), 4 when either compiled no longer gives eager's values, 125 when the code cannot
    be read. Inductor's byte count is printed beside it, not judged: it counts a buffer
    read through an index whole (audit 56, eaede8e418: 800 vs 544 bytes where the kernels
    moved 288 vs 240)."""
    import inspect

    from aliasfuzz.passes.cost import code_temporaries

    source = inspect.getsource(code_temporaries)
    body = source.split('"""', 2)  # the docstring stays in this package
    reader = body[0] + '"""The buffers the generated call allocates and does not return."""' + body[2]
    notes = _witness_notes(meta, rule, "Inductor's code for f allocates a temporary buffer that "
                           "the code for f_witness does not (the buffers its call allocates and "
                           "does not return, as TORCH_LOGS=output_code shows them).")
    head_ = _witness_head(parts, "from torch._inductor.utils import run_and_get_code")
    run = """def compiled(fn):  # the temporaries of the generated code, Inductor's byte count; the results
    torch._dynamo.reset()
    metrics.reset()
    ins = inputs()
    out, codes = run_and_get_code(torch.compile(fn, backend="inductor"DYNAMIC), *ins)
    temps = [code_temporaries(c) for c in codes]
    if not codes or any(t is None for t in temps):
        print("the generated code could not be read: the repro broke")
        raise SystemExit(125)
    return [t for ts in temps for t in ts], metrics.num_bytes_accessed, tree_leaves((out, ins))


""" + _WITNESS_SAME + """

print("torch", torch.__version__)
e = inputs()
eager = tree_leaves((f(*e), e))
temps, moved, out = compiled(f)
temps_witness, moved_witness, out_witness = compiled(f_witness)
if not (same(eager, out) and same(eager, out_witness)):
    print("f or f_witness compiled no longer gives eager's values: no cost claim")
    raise SystemExit(4)
print(f"temporaries: f {temps} ({sum(b for _, b in temps)} bytes), "
      f"f_witness {temps_witness} ({sum(b for _, b in temps_witness)} bytes)")
print(f"for reference, Inductor's own count: f {moved} bytes per call, f_witness {moved_witness}")
raise SystemExit(1 if sum(b for _, b in temps) > sum(b for _, b in temps_witness) else 0)"""
    return _witness_text(p, meta, notes, [head_, [reader.rstrip()], parts["definitions"],
                                          parts["function"], witness, parts["inputs"], [run]])


def is_witness(p: Plan) -> bool:
    """Whether the plan's sighting is a cost finding with a witness spelling that a
    standalone repro compares (:func:`witness_repro`; it still needs the explanation to
    spell its witness in ``f``)."""
    return p.check == "witness" and p.mode == "compile" and p.backend == "inductor"


def spells_witness(p: Plan, meta: dict[str, Any]) -> bool:
    """Whether the repro of ``p`` is the witness comparison (:func:`witness_repro`): a cost
    finding whose explanation's witness is a statement of ``f``."""
    return is_witness(p) and witness_function(
        _parts(p)["function"], p.explanation or str(meta.get("explanation") or "")) is not None


def cost_blame(meta: dict[str, Any]) -> str:
    """What a cost finding's blame says, in a sentence: the stage its pass-off control named
    (:func:`aliasfuzz.oracle.blame.cost_pass_off`) and what the control's code moved, or why
    no stage is named."""
    stage = (meta.get("root") or {}).get("stage") or meta.get("stage")
    said = trail_rows(meta, "pass-off")
    if not stage or str(stage).startswith("unblamed") or not said:
        return ("No stage is named: stages are cut by values, which agree with eager at every "
                "stage" + (f"; with a pass off ({'; '.join(said)})" if said else "") + ".")
    flags, _, what = said[-1].partition(": ")
    return f"Blamed stage: {stage_words(stage)[1]}. With it off ({flags}), {what}."


def witness_repro(p: Plan, meta: dict[str, Any]) -> str | None:
    """``repro.py`` of a cost finding with a witness spelling (:mod:`aliasfuzz.oracle.witness`):
    compiles ``f`` and ``f_witness`` with Inductor and compares the bytes Inductor's own
    accounting says each generated code moves per call (``torch._inductor.metrics.
    num_bytes_accessed``, the ``inductor_metrics`` count of ``compile_fx``); exits 1 when
    ``f`` moves more, 0 when not (fixed), 4 when ``f`` or ``f_witness`` compiled no longer
    gives eager's values (the claim's premise is gone: neither shown nor fixed). The oracle
    makes a witness only where this count agrees with its own (:func:`aliasfuzz.oracle.
    witness.find_witness`). None when the explanation's witness cannot be spelled in ``f``."""
    parts = _parts(p)
    explanation = p.explanation or str(meta.get("explanation") or "")
    got = witness_function(parts["function"], explanation)
    if got is None:
        return None
    rule, witness = got
    from aliasfuzz.oracle.witness import witness_temporaries

    if witness_temporaries(explanation) is not None:
        return _temporaries_repro(p, meta, parts, rule, witness)
    notes = _witness_notes(meta, rule, "Inductor's code for f moves more bytes per call than for "
                           "f_witness (Inductor's own count, the first figure of the finding's "
                           "explanation).")
    head_ = _witness_head(parts)
    run = """def compiled(fn):  # Inductor's count of the bytes its code moves per call; the results
    torch._dynamo.reset()
    metrics.reset()
    ins = inputs()
    out = torch.compile(fn, backend="inductor"DYNAMIC)(*ins)
    return (metrics.num_bytes_accessed, metrics.generated_kernel_count), tree_leaves((out, ins))


""" + _WITNESS_SAME + """

print("torch", torch.__version__)
e = inputs()
eager = tree_leaves((f(*e), e))
(moved, kernels), out = compiled(f)
(moved_witness, kernels_witness), out_witness = compiled(f_witness)
if not moved:  # Inductor's byte count was not logged: nothing was measured
    print("Inductor's metrics counted 0 bytes for f: the repro broke")
    raise SystemExit(125)
if not (same(eager, out) and same(eager, out_witness)):
    print("f or f_witness compiled no longer gives eager's values: no cost claim")
    raise SystemExit(4)
# metrics.num_bytes_accessed: the first figure of the finding's explanation (its loop-extent
# count, the oracle's own, comes after it)
print(f"Inductor's own count: f moves {moved} bytes per call in {kernels} kernel(s), "
      f"f_witness {moved_witness} in {kernels_witness}")
raise SystemExit(1 if moved > moved_witness else 0)"""
    return _witness_text(p, meta, notes, [head_, parts["definitions"], parts["function"], witness,
                                          parts["inputs"], [run]])

"""Upstream issue drafts: one Markdown file per new root cause of a campaign.

PyTorch asks torch.compile bugs to be filed with its "torch.compile Bug Report" form
(``.github/ISSUE_TEMPLATE/pt2-bug-report.yml``; ``bug-report.yml`` for the rest, e.g.
TorchScript): a title, "Describe the bug" (what goes wrong, which backend or setting
causes it, a minimal reproducer), "Error logs" and "Versions" (the output of
``python -m torch.utils.collect_env``). The form also asks fuzzer reports to compare at
default tolerances against a higher-precision baseline and to carry the label
``topic: fuzzer``. :func:`render_draft` fills those sections from a corpus entry: the
title of :func:`aliasfuzz.campaign.repro.title`, a description, the same ``repro.py``
the corpus holds (re-rendered from the entry's current meta), eager against compiled
(the entry's ``diff``), the blamed stage and the stage-by-stage trail, the versions that
found it, and how often and through which pipelines the root cause was hit.

:func:`write_drafts` writes ``<report>/upstream/<entry id>.md`` for the root causes of a
campaign whose status is ``new`` (new to the corpus and not a known upstream bug).
"""

from __future__ import annotations

import os
from collections import Counter
from pathlib import Path
from typing import Any

from aliasfuzz.campaign._repro_frames import inductor_settings
from aliasfuzz.campaign._repro_words import (
    effect,
    fake_tensor_error,
    known_lines,
    mismatch,
    overlap_refusal,
    pipeline_words,
    shown,
)
from aliasfuzz.campaign.repro import cost_blame

__all__ = ["render_draft", "write_drafts"]

_TEMPLATE = r"""# {{ title }}

{% if known %}
**{{ known[0] }}**{% if known|length > 1 %}: {{ known[1] }}{% endif %}


{% endif %}
<!-- Draft from aliasfuzz entry {{ id }}. File it with the "{{ form }}" form
({{ form_file }}), label "topic: fuzzer"; check every sentence by hand first. -->

### 🐛 Describe the bug

{{ description }}

**Why it is a bug** (the fuzzer's ground; check it, and complete it by hand before filing):
{{ why }}

{% if witness %}
Blame:
{% else %}
Where it breaks (each stage's result on fresh inputs against eager; the blamed stage is
the first of the final run of stages that depart):
{% endif %}

{% for stage, what in trail %}
- `{{ stage }}`: {{ what }}{% if stage in blamed %} **← blamed**{% endif %}

{% else %}
- blamed stage: {{ blamed_words }}{% if not trail %} (not cut stage by stage{% if blame_reason %}: {{ blame_reason }}{% endif %}){% endif %}

{% endfor %}

Minimal repro ({{ how }}; `python repro.py` exits 1 while the bug is there, 0 once fixed{% if cuda %}, 3 without a GPU{% endif %}{% if witness %}, 4 when `f` and `f_witness` compiled no longer give eager's values{% endif %}):
{% if harness %}

> This repro needs more than public API: {{ harness }}.
{% endif %}

```python
{{ repro }}```

{% if cost %}
What the fuzzer measured ({{ actual }}; values agree with eager, the claim is the cost):
{% else %}
Expected (eager) vs actual ({{ actual }}, as the fuzzer saw it):
{% endif %}

```
{{ diff }}
```

{{ tolerance }}

### Error logs

{% if error %}
```
{{ error }}
```
{% else %}
No error: the compiled program runs and {{ effect }}.
{% endif %}

### Versions

Found with torch {{ versions.torch }}, triton {{ versions.triton }}, Python {{ versions.python }} on {{ device }}.
Before filing, replace this with the output of `python -m torch.utils.collect_env` on the machine you reproduce it on.

Hit {{ total }} time(s) by the fuzzer: {{ hits }}.
{% for b in related %}
Related: {{ b.issue }} ({{ b.title }}).
{% endfor %}
"""

#: pipeline -> what runs it, in words
_HOW = {
    "compile": "torch.compile(f, backend={backend!r}{args})",
    "fastpath": "torch.compile with Inductor stopped after its post-grad passes",
    "fx": "make_fx(torch.func.functionalize(f)) then torch.fx.passes.reinplace",
    "jit": "torch.jit.script",
    "none": "no standalone repro",
}

_TOLERANCE = (
    "Values are compared with `torch.testing.assert_close` at its default tolerances; the "
    "fuzzer confirmed float differences against an fp64 eager run (as "
    "`torch._dynamo.utils.same(fp64_ref=...)` does). The program has no random ops."
)


def _trail(trail: list[Any]) -> list[tuple[str, str]]:
    """The trail with a reason repeated from the stage before shortened to ``(same)``."""
    out, last = [], None
    for stage, what in trail:
        verb, _, why = str(what).partition(" (")
        out.append((stage, f"{verb} (same)" if why and why == last else what))
        last = why or None
    return out


#: check -> the contract the draft's "Why it is a bug" cites (``oracle/README.md``'s table of
#: observables and the contracts that promise them)
_CONTRACTS = {
    "values": "compiled code computes eager's values up to floating-point reassociation (the "
              "torch.compile FAQ on numerical differences); these differ beyond the default "
              "tolerances (a float difference is confirmed against an fp64 eager run, "
              "integers are compared exactly).",
    "inputs": "functionalization replays every input mutation onto the caller's tensors "
              "(AOTAutograd's input-mutation epilogue; TorchScript runs the program's own "
              "writes), so the inputs after the call must hold eager's values.",
    "aliasing": "which outputs share storage decides what a caller's later in-place write "
                "changes: AOTAutograd regenerates an output that views an input as a view of "
                "it and keeps a fresh output fresh (OutputType.alias_of_input / non_alias). "
                "Every value agrees; say why the sharing matters here.",
    "requires_grad": "outputs' requires_grad is part of AOTAutograd's output metadata "
                     "(ViewAndMutationMeta.output_info) and must be eager's.",
    "grads": "a compiled function's backward computes eager's gradients (AOTAutograd traces "
             "the joint graph from the same derivative formulas).",
}
#: Words of a PyTorch error that calls the program itself ill-defined or unsupported: the
#: draft must then argue why it is defined (fresh users 51 and 52's B6: unfold's "banned as
#: the behavior is not well defined" on a view with one window, which overlaps nothing)
_CALLS_IT_UNDEFINED = ("not well defined", "banned", "undefined behavior", "not supported",
                       "unsupported")


def _why(p: Any) -> str:
    """The draft's "Why it is a bug" for the sighting plan ``p`` shows
    (:func:`aliasfuzz.campaign.repro.plan`): the contract its observable breaks, or for a
    crash that eager runs the program; flagged to be written by hand where the fuzzer's
    ground is not enough (an error that calls the program ill-defined, an aliasing claim)."""
    verdict, check, said = p.verdict, p.check, p.explanation
    if verdict == "missed-reinplace":
        return ("no wrong result: the compiled code keeps a copy that writing in place avoids "
                "(the repro prints the bytes); file it as a performance issue.")
    if verdict in ("crash", "timeout"):
        why = ("eager runs this program and returns a result; the compiled call "
               + ("raises instead" if verdict == "crash" else "does not finish") + ".")
        refused = overlap_refusal({"explanation": said}, p.program)
        if refused:  # the view it calls overlapping does not overlap (fresh user 55's B3)
            why += " PyTorch's error calls it ill-defined, but " + refused
        elif any(w in said.lower() for w in _CALLS_IT_UNDEFINED):
            why += (" PyTorch's error calls the program ill-defined or unsupported: write "
                    "down why it is well defined (what eager computes, and why that is its "
                    "only meaning) before filing, or do not file it.")
        return why
    return _CONTRACTS.get(str(check), "compiled code departs from eager on a program eager "
                          "runs; say which promise of torch.compile it breaks.")


def _description(meta: dict[str, Any], how: str, stage_words: str,
                 sighting: dict[str, Any] | None = None, witness: bool = False) -> str:
    exp = sighting or meta.get("expected") or {}
    verdict = exp.get("verdict")
    said = exp.get("explanation") if sighting else meta.get("explanation")
    from aliasfuzz.oracle.witness import witness_temporaries

    if witness and witness_temporaries(said or "") is not None:
        return (f"{how} allocates a temporary buffer for `f` that the code for `f_witness`, "
                "an equivalent spelling of the same program, does not (both give eager's "
                "values; the repro reads the buffers each generated `call` allocates and does "
                "not return, and prints Inductor's byte count beside them for reference). The "
                f"excess grows with the tensor sizes.\n\n{cost_blame(meta)} The fuzzer's own "
                f"account: {shown(said or '').strip()}")
    if witness:  # a cost claim: no stage departs from eager, so none is blamed
        return (f"{how} moves more bytes per call for `f` than for `f_witness`, an "
                "equivalent spelling of the same program that compiles to leaner code "
                "(both give eager's values; the repro prints Inductor's own byte count, "
                "`torch._inductor.metrics.num_bytes_accessed`, for each). The excess grows "
                f"with the tensor sizes.\n\n{cost_blame(meta)} The fuzzer's own account: "
                f"{shown(said or '').strip()}")
    detail = mismatch((said or "").split(" | ")[0])  # the effect names the aliasing
    tail = f": {detail}" if detail else ""
    if verdict == "missed-reinplace":
        what = (f"{how} keeps a copy that writing in place would avoid{tail}. Values are "
                "right; the cost is the extra buffer and the bytes copied on every call, "
                "printed by the repro")
    elif verdict in ("crash", "timeout"):
        what = f"{how} raises on a program eager runs{tail}"
    else:  # the observable that differs, in the claim's words
        what = f"{how} {effect(meta, sighting)} on the program below{tail}"
    stages = [str(x) for x in meta.get("stages") or [] if x]
    stage = (meta.get("root") or {}).get("stage")
    if stages and stage and stages[0] != stage:  # a stacked bug: this root is a later stage's
        return (f"{what}.\n\nThe stage to blame is {stage_words}: with the pipeline cut stage "
                f"by stage, the result already departs from eager after `{stages[0]}` (filed "
                "apart), and this stage adds a departure of its own (elements or aliasing the "
                "stage before it got right).")
    return (f"{what}.\n\nThe stage to blame is {stage_words}: with the pipeline cut stage by "
            "stage, the result departs from eager first there (the stages before it agree).")


def render_draft(program: Any, meta: dict[str, Any], *, campaign_hits: dict[str, int] | None = None) -> str:
    """The Markdown issue draft of a corpus entry (``program`` and its ``meta.json``).

    ``campaign_hits`` (pipeline -> sightings in the campaign being reported) is shown
    next to the entry's own ``hits`` over all campaigns.
    """
    import jinja2

    from aliasfuzz.campaign.repro import plan, render_repro, spells_witness, stage_words, title

    p = plan(program, meta)
    repro = render_repro(program, meta)
    witness = spells_witness(p, meta)
    root = meta.get("root") or {}
    stage = root.get("stage")
    _, words = stage_words(stage, p.pipeline)
    # the repro's own compile arguments (fresh user 53's B1: a finding of dynamic shapes was
    # said to be backend='aot_eager''s own; the repro compiles with dynamic=True)
    how = _HOW[p.mode].format(backend=p.backend, args=inductor_settings(p)[1])
    exp = meta.get("expected") or {}
    total = Counter(str(h.get("pipeline")) for h in meta.get("hits") or [])
    # pipelines as PyTorch names what runs them (fresh user 47's B5)
    def counted(per: dict[str, int]) -> str:
        return ", ".join(f"{pipeline_words(k)} × {n}" for k, n in per.items())

    hits = counted(total) or pipeline_words(exp.get("pipeline", "?"))
    if campaign_hits:
        hits += f" (this campaign: {counted(campaign_hits)})"
    seen_by = pipeline_words(exp.get("pipeline", "compiled"))
    diff = shown(meta.get("diff") or meta.get("explanation") or "").strip()
    if diff.startswith(f"{exp.get('pipeline')}: "):  # the oracle's own first line
        diff = f"{seen_by}: {diff[len(str(exp.get('pipeline'))) + 2:]}"
    said = shown(meta.get("explanation") or "").strip()
    if p.pipeline != exp.get("pipeline") and p.explanation:
        # the repro shows another sighting: its words, not the entry's pipeline's (fresh
        # user 53's B2: "Inductor up to its post-grad passes" above an aot_eager repro)
        seen_by = pipeline_words(p.pipeline)
        diff = said = shown(p.explanation).strip()
    caught = fake_tensor_error(meta)
    if caught and caught not in said:  # the error Dynamo caught, not only its wrapper (B2)
        said += f"\n(the error Dynamo caught on fake tensors: {caught})"
    pt2 = p.pipeline != "torchscript"
    env = jinja2.Environment(trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                             undefined=jinja2.StrictUndefined, autoescape=False)
    return env.from_string(_TEMPLATE).render(
        id=meta.get("id", ""),
        title=title(meta, p.pipeline, p.sighting()),
        known=known_lines(meta, p.sighting()),
        form="torch.compile Bug Report" if pt2 else "Bug Report",
        form_file=".github/ISSUE_TEMPLATE/" + ("pt2-bug-report.yml" if pt2 else "bug-report.yml"),
        description=_description(meta, how, (f"`{stage}`" + ("" if words == stage else f" ({words})"))
                                 if stage else words, p.sighting(), witness),
        trail=_trail(meta.get("trail") or []),
        blamed=set(meta.get("stages") or ([stage] if stage else [])),
        blamed_words=words,
        why=_why(p),
        how=how,
        cuda=p.cuda,
        harness="" if witness else p.harness,  # the witness repro is public API only
        repro=repro,
        witness=witness,
        # a cost claim has no wrong result to call "actual" (fresh user 47's B11)
        cost=exp.get("verdict") == "missed-reinplace",
        blame_reason=str(meta.get("blame_reason") or ""),
        actual=seen_by if p.own else f"{seen_by}, on the entry's program",
        diff=diff,
        # float tolerances are about values (fresh user 47's B11: aliasing and
        # requires_grad drafts carried the paragraph)
        tolerance=_TOLERANCE if exp.get("verdict") == "miscompile" and exp.get("check") in (
            "values", "inputs", "grads", None) else "",
        error=said if p.verdict in ("crash", "timeout") else "",
        effect=effect(meta, p.sighting()),
        versions={"torch": "?", "triton": "?", "python": "?", **(meta.get("versions") or {})},
        # a Triton kernel found on CPU ran in Triton's interpreter; its repro launches it on
        # a GPU (fresh user 47's B12: the draft said "on cpu" above a repro that exits 3)
        device=(f"{meta.get('device', 'cpu')} (Triton's interpreter: the repro needs a GPU, "
                "where the fuzzer did not run it)"
                if p.cuda and not str(meta.get("device", "cpu")).startswith("cuda")
                else meta.get("device", "cpu")),
        total=sum(total.values()) or 1,
        hits=hits,
        related=meta.get("related") or [],
    )


def write_drafts(rows: list[dict[str, Any]], corpus: str | Path, out: str | Path) -> list[Path]:
    """Write ``out/upstream/<id>.md`` for every row of
    :func:`aliasfuzz.report.data.root_causes` whose ``status`` is ``new`` and whose entry
    can be read; return the paths written."""
    from aliasfuzz.campaign.corpus import load_entry
    from aliasfuzz.errors import InvalidArgument

    written = []
    for r in rows:
        if r.get("status") != "new" or r.get("error"):
            continue
        try:
            entry = load_entry(Path(corpus) / r["id"])
        except InvalidArgument:
            continue
        d = Path(out) / "upstream"
        d.mkdir(parents=True, exist_ok=True)
        path = d / f"{r['id']}.md"
        tmp = path.with_name(path.name + ".tmp")
        tmp.write_text(render_draft(entry.program, entry.meta, campaign_hits=r.get("hits")))
        os.replace(tmp, path)
        written.append(path)
    return written

"""Words for a finding: the stage blamed, the effect, a one-line title (repros, reports).

:func:`title` gives the first line of a ``repro.py`` docstring and of an upstream issue
draft: ``[component] <stage in words> <effect>: <first line of the explanation>``, e.g.
``[inductor] joint-graph pass remove_noop_ops returns wrong values: out0: ...``. The
component is the label PyTorch's tracker uses for the code that holds the stage
(``dynamo``, ``aot_autograd``, ``functorch``, ``fx``, ``inductor``, ``jit``).

The claim names the observable that differs (:func:`observable`), read from the judge's
failed check and its mismatch message, never from the verdict or a known bug's text: an
input's or output's values where a value differs; an output that shares storage with an
input in eager and not compiled (or the reverse) where its values differ only through that
aliasing (``oracle/differential.py`` appends ``; out0 aliases x in eager but is fresh
compiled`` to such a ``values`` mismatch: F.dropout(x, training=False) returns ``x``, so a
later ``x.add_`` shows in eager's output only, fourth audit a649b9362b); and it says so
plainly where only output aliasing differs. :func:`known_lines` puts a known upstream bug
(``corpus/known.toml``) up front: its issue, its title, and why the difference is a bug when
that ``why`` describes the observable shown (the bug's ``checks``).
"""

from __future__ import annotations

import re
from typing import Any

from aliasfuzz.errors import clip

__all__ = [
    "effect", "first_line", "graph_alias", "intermediate_alias", "known_lines", "mismatch", "observable",
    "order_dependent", "output_metadata", "overlap_refusal", "pipeline_words", "shown", "trail_rows",
    "stage_words", "title", "ts_check",
]

#: stage -> (component label of an upstream title, words for the stage)
_STAGES: dict[str, tuple[str, str]] = {
    "dynamo": ("dynamo", "Dynamo capture"),
    "decomposition": ("aot_autograd", "decomposition"),
    "aten-trace": ("aot_autograd", "tracing to ATen (make_fx), with no decomposition"),
    "functionalization": ("aot_autograd", "functionalization"),
    # the cut separates the wrappers as a whole, not one of them: naming synthetic bases on a
    # one-input program, which has none, misled (audit 40, 761a24f5b4)
    "aot-runtime": ("aot_autograd", "runtime wrappers (the code run around the functional graph)"),
    # the cut's "aot" graph is AOTAutograd's as Inductor calls it and the pre-grad passes
    # (passes/stages.py): "pre-grad passes" alone misled on a bug aot_eager shows too (audit
    # 42, faf26743f1)
    "aot": ("inductor", "AOTAutograd as Inductor calls it, or its pre-grad passes"),
    "reinplace": ("inductor", "reinplace_inplaceable_ops"),
    "lowering": ("inductor", "lowering"),
    "scheduler": ("inductor", "scheduler (fusion)"),
    "codegen:cpp-vectorized": ("inductor", "vectorized C++ codegen (CppVecKernel)"),
    # named by a control, not a cut: the forward alone agrees (audit 48, 56183486c8: "lowering"
    # sent the reader to forward kernels that are right)
    "backward:donated-buffer": ("aot_autograd", "the compiled backward's reuse of a donated "
                                "buffer (bw_donated_idxs)"),
    "ts-frontend": ("jit", "TorchScript frontend (the graph torch.jit.script builds, run unoptimized)"),
    # "fuser off" was read as "no fusion group": the legacy executor still forms
    # prim::FusionGroup nodes, run by their fallback graphs (audit 34, 2441fd8370)
    "ts-optimizer": ("jit", "TorchScript executor's graph optimization (fused kernels off)"),
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
    ("miscompile", "grads"): "computes wrong gradients (the forward agrees with eager)",
    ("crash", "grads"): "raises in the backward where eager's backward runs",
    ("miscompile", None): "computes something other than eager",
    ("crash", None): "raises where eager does not",
    # a crash when run: the blamed stage made the program, not itself, raise (audit 40,
    # 3326c5ee66: eager code after a graph break raised on an alias the pass had returned)
    ("crash", "run"): "makes the compiled program raise when run, where eager does not",
    ("timeout", None): "hangs where eager does not",
    ("missed-reinplace", "witness"): "moves more bytes than an equivalent spelling",
    ("missed-reinplace", None): "keeps a copy it could write in place",
    ("unsafe-reinplace", None): "writes in place over a value read later",
    ("invariant", None): "leaves a broken graph",
}

#: What a witness leaner by its temporaries says (``oracle/witness.py`` Witness.message).
_TEMPORARIES = "bytes of temporaries per call, the witness"

#: The note ``oracle/differential.py`` appends to a values mismatch whose output's storage
#: sharing differs too: output, eager's sharing, compiled's sharing, inputs agreeing.
_ALIAS_NOTE = re.compile(
    r"; (?P<out>out\d+) (?:aliases (?P<eager>[^;]+?)|is fresh) in eager "
    r"but (?:aliases (?P<compiled>[^;]+?)|is fresh) compiled"
    r"(?P<inputs_agree>; every input agrees after the call)?"
)


def _said(meta: dict[str, Any], sighting: dict[str, Any] | None) -> str:
    return str((sighting.get("explanation") if sighting else meta.get("explanation")) or "")


def observable(meta: dict[str, Any], sighting: dict[str, Any] | None = None) -> str | None:
    """What differs in the sighting shown (``sighting``, a hit, or the entry's own
    ``expected`` and ``explanation``): the failed check (``values``, ``inputs``,
    ``aliasing``, ``requires_grad``, ``grads``; a TorchScript check as :func:`ts_check` reads it),
    except that a ``values`` mismatch carrying the differential's aliasing note is
    ``aliasing``: the output's values differ because it shares storage in one run only."""
    exp = sighting or meta.get("expected") or {}
    check, said = exp.get("check"), _said(meta, sighting)
    if check == "torchscript":
        return ts_check(said)
    if check == "values" and _ALIAS_NOTE.search(first_line(said, 10_000)):
        return "aliasing"
    return check


#: A crash explanation as the judge writes it (``compiled raises _Failed: trace:
#: BackendCompilerFailed: backend='backend' raised: ZeroDivisionError: ...; eager does not``):
#: the phase, then the error behind our own wrapper and Dynamo's.
_CRASH = re.compile(
    r"^compiled raises _Failed: (?P<phase>\w+): "
    r"(?:BackendCompilerFailed: backend='[^']*' raised:\s*)?(?P<error>.*?)(?:; eager does not)?$"
)
#: Dynamo's advice appended to every error it re-raises (``torch/_dynamo/exc.py``
#: ``augment_exc_message``'s hint): an exception without a message of its own was titled by
#: it (fresh user 31's B9: ``AssertionError: Set TORCHDYNAMO_VERBOSE=1 for the internal ...``)
_DYNAMO_HINT = re.compile(r"\s*Set TORCHDYNAMO_VERBOSE=1 for the internal stack trace.*$")
#: Python object identities in an error message, which differ on every run and tell a reader
#: nothing (audit 46, ddd5e9100d: ``s18**2 (<class 'torch.SymInt'>, 140118345716880)is not
#: tracked with proxy for <torch.fx.experimental.proxy_tensor.PythonKeyTracer object at
#: 0x7f6fd8484b10>``): a ``(<class>, id)`` pair and an ``<object at 0x...>`` become the
#: class's own name.
_IDENTITIES = (
    (re.compile(r"\s*\(<class '[\w.]+'>, \d+\)\s*"), " "),
    (re.compile(r"<(?:[\w]+\.)*(\w+) object at 0x[0-9a-fA-F]+>"), r"\1"),
)
_PHASES = {"trace": "while compiling", "compile": "while compiling", "run": "when run"}


def mismatch(said: str) -> str:
    """The first line of an explanation without the differential's aliasing note (the
    effect of :func:`effect` says it in words); for a crash, the error itself and when it
    was raised (``ZeroDivisionError: integer modulo by zero (while compiling)``), without
    the harness's and Dynamo's wrappers that every crash shares, and without the note of a
    second eager opinion that could not run (``oracle/opinions.py``: fresh user 47's B2, a
    title and a draft ending "you set torch.use_deterministic_algorithms(True)")."""
    line = _NO_SECOND_OPINION.sub("", first_line(said, 10_000))
    crash = _CRASH.match(line)
    if crash and crash["error"].strip():
        when = _PHASES.get(crash["phase"], f"in {crash['phase']}")
        error = _DYNAMO_HINT.sub("", crash["error"]).strip()
        for pattern, repl in _IDENTITIES:
            error = pattern.sub(repl, error)
        if error.endswith(":"):  # an exception without a message: Dynamo's hint was all
            error = f"{error[:-1]} (no message)"
        return f"{error} ({when})"
    return _ALIAS_NOTE.split(line)[0]


#: The note ``oracle/opinions.py`` appends when a second eager opinion could not run.
_NO_SECOND_OPINION = re.compile(r"; second opinion unavailable \(.*$")

#: ``aliasfuzz.oracle.blame.SYNTHETIC_BASE`` (a ``raised-in`` trail entry's words; not
#: imported: the oracle imports torch, and the words need not).
_SYNTHETIC_BASE = "AOTAutograd's synthetic base of aliased graph inputs"

#: The judge's wrapper of a pipeline's failure (``oracle/judge.py``'s ``_Failed``, whose
#: message begins with the clock stage that raised) wherever it occurs in a text: in a
#: crash explanation, in the eager / compiled columns, cut short in a column's cell.
_FAILED = re.compile(r"_Failed: (?P<phase>\w+): ")


def shown(text: str) -> str:
    """``text`` (an explanation or an eager / compiled diff, as the oracle stored it) as a
    report, an issue draft or a repro shows it: PyTorch's own exception, without the
    harness's internal wrapper ``_Failed: <phase>:``; the phase becomes words after the
    error (``compiled raises RuntimeError: boom (while compiling); eager does not``)
    where the error ends before ``; eager does not``, and is dropped elsewhere (a column's
    cell cut short). Fresh user 45's B4: an upstream draft read ``compiled raises _Failed:
    trace: RuntimeError: ...``. Stored texts keep the wrapper: :data:`_CRASH` and
    ``known._failed_at`` read the phase from it."""

    def plain(line: str) -> str:
        crash = _CRASH.match(line)
        if crash and crash["error"].strip() and line.endswith("; eager does not"):
            when = _PHASES.get(crash["phase"], f"in {crash['phase']}")
            error = _FAILED.sub("", line, count=1)[len("compiled raises "):-len("; eager does not")]
            return f"compiled raises {error} ({when}); eager does not"
        return _FAILED.sub("", line)

    return "\n".join(plain(line) for line in str(text).split("\n"))


#: The differential's mismatch where no value was compared (``oracle/differential.py``,
#: ``_compare`` and ``_values``): a tensor's ``shape`` or ``dtype`` (``out0: shape (4, 4)
#: in eager, (1, 4, 4) compiled``), or how many outputs or inputs there are.
_METADATA = re.compile(r"^(?P<where>[^:;]+): (?P<what>shape|dtype) \S.* in eager, .* compiled")
_COUNT = re.compile(r"^\d+ (?P<kind>\w+) in eager, \d+ compiled")


def _through_metadata(check: str | None, said: str) -> str | None:
    """The effect of a ``values`` or ``inputs`` mismatch that is a tensor's shape or dtype,
    or the number of outputs, not its values (fresh user 21: ``resize_as_`` of a view,
    ``out0: shape (4, 4) in eager, (1, 4, 4) compiled``, was titled "returns wrong
    values"), or None."""
    line = first_line(said, 10_000)
    if m := _METADATA.match(line):
        verb = "leaves" if check == "inputs" else "returns"
        return f"{verb} {m['where']} with the wrong {m['what']} (values not compared)"
    if m := _COUNT.match(line):
        return f"returns another number of {m['kind']} than eager"
    return None


def _through_aliasing(said: str) -> str | None:
    """The effect of a values mismatch caused by output aliasing, from the note, or None."""
    m = _ALIAS_NOTE.search(first_line(said, 10_000))
    if m is None:
        return None
    k, e, c = m["out"], m["eager"], m["compiled"]
    if e and not c:
        what = (f"returns {k} as a copy where eager's {k} shares storage with {e}, so a later "
                f"in-place write to {e} shows in eager's {k} only")
    elif c and not e:
        what = (f"returns {k} sharing storage with {c} where eager's {k} is fresh, so a later "
                f"in-place write to {c} shows in the compiled {k} only")
    else:
        what = f"returns {k} sharing storage with {c} where eager's {k} shares it with {e}"
    return what + (" (every input agrees after the call)" if m["inputs_agree"] else "")


def pipeline_words(pipeline: str | None) -> str:
    """What runs a pipeline, as PyTorch names it (``inductor-reinplace`` -> ``Inductor up to
    its post-grad passes``): fresh user 47's B5, an issue draft read "actual
    (inductor-reinplace, as the fuzzer saw it)"."""
    return _UNBLAMED.get(str(pipeline), ("", str(pipeline)))[1]


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
    # "raised RuntimeError: RuntimeError: ...", as entries written before errors.message say
    return clip(re.sub(r"\b(\w+Error): \1: ", r"\1: ", line), width)


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


_TS_RUN = "The following operation failed in the TorchScript interpreter"


def _raised_when_run(meta: dict[str, Any], sighting: dict[str, Any] | None) -> bool:
    """Whether a crash's exception was raised running the compiled program (the judge's
    ``_Failed: run:`` phase) and a stage was blamed, which then did not raise itself
    (``aot-runtime`` is named because its wrappers raised: :mod:`aliasfuzz.oracle.blame`)."""
    root = meta.get("root") or {}
    stage = (sighting or {}).get("stage") or root.get("stage") or meta.get("stage")
    said = _said(meta, sighting)
    crash = _CRASH.match(first_line(said, 10_000))
    # TorchScript's interpreter says so when an op of the graph it runs fails (audit 42,
    # 5401fed675: "graph passes ... raises" for an error the optimized graph raised)
    when_run = (crash is not None and crash["phase"] == "run") or _TS_RUN in said
    return bool(when_run and stage and stage != "aot-runtime"
                and not str(stage).startswith("unblamed"))


def effect(meta: dict[str, Any], sighting: dict[str, Any] | None = None) -> str:
    """What goes wrong, in words, from the entry's check and mismatch (or a ``sighting``'s:
    a hit of ``meta["hits"]``): ``returns wrong values``, ``mutates an input differently
    from eager``, ``returns out0 with the wrong shape (values not compared)``, ``returns out0 as a copy where eager's out0 shares storage with x, ...``
    (the title's verb phrase; the verdict only for findings without a check)."""
    exp = sighting or meta.get("expected") or {}
    verdict, check = exp.get("verdict", ""), exp.get("check")
    if verdict == "crash" and str(check or "").startswith("signal:"):
        # a death is not an exception: say how the process dies, and heap corruption first
        sig, said = str(check).split(":", 1)[1], _said(meta, sighting)
        if "corrupts the heap" in said or "glibc found the heap corrupted" in said:
            return f"corrupts the heap where eager does not (an out-of-bounds write; {sig})"
        return f"kills the process ({sig}) where eager does not"
    if check == "out-of-bounds":  # oracle.wrapper_bounds (oracle.heap.OUT_OF_BOUNDS)
        return ("writes out of bounds where eager does not (a view past its storage in "
                "Inductor's wrapper)")
    if verdict == "crash" and check != "grads" and _raised_when_run(meta, sighting):
        check = "run"
    elif check == "torchscript":
        check = ts_check(_said(meta, sighting))
    elif verdict == "miscompile" and check == "values":
        aliased = _through_aliasing(_said(meta, sighting))
        if aliased:
            return aliased
    if (verdict, check) == ("missed-reinplace", "witness") and _TEMPORARIES in _said(meta, sighting):
        return "allocates a temporary that an equivalent spelling does not"
    if verdict == "miscompile" and check in ("values", "inputs"):
        metadata = _through_metadata(check, _said(meta, sighting))
        if metadata:  # the failed comparison was of a shape or dtype, not of values
            return metadata
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
    said = mismatch(_said(meta, sighting))
    caught = None if sighting else fake_tensor_error(meta)
    if caught and said.startswith(_FAKE_CALL):
        # fresh user 51's B5: the title named Dynamo's wrapper, the trail the error itself
        said = f"TorchRuntimeError: {caught}{said[len(_FAKE_CALL):]}"
    if ((sighting or exp).get("check")) == "out-of-bounds":
        # the effect says it already: "writes out of bounds ...: inductor writes out of
        # bounds: Inductor's wrapper made ..." (fresh user 47's B10)
        said = re.sub(r"^[\w-]+ writes out of bounds: ", "", said)
    detail = first_line(said, 120)  # room for "<eager value> in eager, <value> compiled"
    if (root.get("stage") or meta.get("stage")) == "ts-frontend":
        # the frontend's graph is every executor's: "profiling call 0 (profiled): ..." above a
        # repro that runs the simple executor read as a contradiction (fresh user 33)
        # (audit 55, d176cf2a7f: a crash's "profiling call 0 (profiled) raised ..." kept it)
        detail = re.sub(r"^\w+ call \d+ \([^)]*\)(: | raised )", "", detail)
    only = _one_executor(_said(meta, sighting)) if str(root.get("stage") or meta.get("stage")) in (
        "ts-optimizer", "ts-fuser") else None
    if only and words.startswith("TorchScript executor"):
        # audit 43, 1ccd29630f: only the legacy executor departed, which the title hid
        words = f"{only} {words}"
    if any(said.startswith(_SYNTHETIC_BASE) for said in trail_rows(meta, "raised-in")):
        # audit 46 (ddd5e9100d): "functionalization raises" sent the reader to the program's
        # ops; AOTAutograd raised handling graph inputs that alias one another
        words = f"{words} of a synthetic base (graph inputs that alias, one mutated)"
    alias = (intermediate_alias(meta) if observable(meta) == "aliasing" else graph_alias(meta)) \
        if not sighting else None
    lost = output_metadata(meta) if not sighting and not alias else None
    if lost:
        # audit 57 (0e76bd01f8): the title said "functionalization" while the docstring
        # pointed at AOTAutograd's output metadata
        alias = f"classifies {lost}, an alias of an input in eager, as a fresh output (non_alias)"
    od = None if sighting or alias else order_dependent(meta)
    if od:
        # fresh user 55's B4 (ec5377b470): "functionalization ... and mutates an input
        # differently" read as functionalization's own result, which eager-run agrees with
        words = f"{words} {od.rstrip(',')}; compiled, the program"
    elif alias:
        # audits 42 and 43 (3326c5ee66, 98e128b7e3): the program-level effect was eager code
        # after a graph break acting on an output that aliased the input; the alias the
        # blamed graph made is the defect, so it leads
        words = f"{words} {alias} and"
    return f"[{comp}] {words} {effect(meta, sighting)}" + (f": {detail}" if detail else "")


_GRAPH_ALIAS = re.compile(r"aliasing: graph output (\d+) shares graph input (\d+)'s storage where "
                          r"AOTAutograd's output metadata has it fresh")


def graph_alias(meta: dict[str, Any]) -> str | None:
    """``makes its graph return graph input j's storage as fresh output k`` when the blamed
    stage's own departure (its row of ``meta["trail"]``, :mod:`aliasfuzz.oracle.blame`) includes
    the graph-level aliasing that :func:`aliasfuzz.passes.stages.fresh_output_aliasing_input`
    observes: the stage's graph hands back an input's storage where AOTAutograd's
    ``ViewAndMutationMeta`` records the output as fresh (``non_alias``). None otherwise
    (another stage's row, an entry without a trail)."""
    for said in _blamed_rows(meta):
        m = _GRAPH_ALIAS.search(said)
        if m and said.startswith("departs"):
            return f"makes its graph return graph input {m[2]}'s storage as fresh output {m[1]}"
    return None


_INTERMEDIATE_ALIAS = re.compile(r"aliasing: graph outputs \d+ and \d+ share one storage \(views "
                                 r"of one intermediate\) where AOTAutograd's output metadata")


def intermediate_alias(meta: dict[str, Any]) -> str | None:
    """``records views of one intermediate as fresh outputs`` when the blamed stage's own
    row of ``meta["trail"]`` departs by what
    :func:`aliasfuzz.passes.stages.fresh_outputs_sharing` observes (AOTAutograd's output
    metadata has two views of one intermediate ``non_alias``, leaving their aliasing to the
    backend; audit 52, 1e3744d1cf); None otherwise."""
    for said in _blamed_rows(meta):
        if said.startswith("departs") and _INTERMEDIATE_ALIAS.search(said):
            return "records views of one intermediate as fresh outputs"
    return None


_OUTPUT_METADATA = re.compile(r"AOTAutograd's output metadata \(collect_metadata_analysis\) "
                              r"has (out\d+) non_alias")


def output_metadata(meta: dict[str, Any]) -> str | None:
    """The output (``out0``) whose alias of an input AOTAutograd's output metadata missed,
    when the blamed stage's own row of ``meta["trail"]`` says so
    (:func:`aliasfuzz.passes.stages.output_metadata_note`, audit 56, 0e76bd01f8); None
    otherwise."""
    for said in _blamed_rows(meta):
        m = _OUTPUT_METADATA.search(said) if said.startswith("departs") else None
        if m:
            return m.group(1)
    return None


#: Dynamo's wrapper of an error raised running an FX node on fake tensors (torch 2.13).
_FAKE_CALL = "TorchRuntimeError: RuntimeError when making fake tensor call"


def fake_tensor_error(meta: dict[str, Any]) -> str | None:
    """The error Dynamo caught on fake tensors (``RuntimeError: Cannot call numel() on
    tensor with symbolic sizes/strides``), from the blamed stage's trail row
    (``departs (raises TorchRuntimeError: RuntimeError when making fake tensor call <- T:
    msg)``, :func:`aliasfuzz.oracle.blame._describe`); None for another row."""
    for said in _blamed_rows(meta):
        head = f"departs (raises {_FAKE_CALL} <- "
        if said.startswith(head) and said.endswith(")"):
            return said[len(head):-1]
    return None


def control_agrees(meta: dict[str, Any], name: str) -> bool:
    """Whether a control's row ``name`` of ``meta["trail"]`` (``<setting>: agrees ...``, as
    :func:`aliasfuzz.oracle.blame.dynamo_rewrite` writes it) says the pipeline agreed with
    eager under the control."""
    return any(said.split(": ", 1)[-1].startswith("agrees") for said in trail_rows(meta, name))


def trail_rows(meta: dict[str, Any], name: Any) -> list[str]:
    """What the rows of ``meta["trail"]`` named ``name`` (a stage, or a control's entry such
    as ``raised-in`` or ``pass-off``) say, in trail order (none for an entry without a
    trail)."""
    return [str(row[1]) for row in meta.get("trail") or ()
            if isinstance(row, (list, tuple)) and len(row) == 2 and row[0] == name]


def _blamed_rows(meta: dict[str, Any]) -> list[str]:
    """What the blamed stage's own rows of ``meta["trail"]`` say."""
    return trail_rows(meta, (meta.get("root") or {}).get("stage") or meta.get("stage"))


#: A stage's departure by an order-dependent write (``oracle/blame.py``): its graph writes
#: one storage element twice with different values in one op, so the result is the order's.
_ORDER_DEPENDENT = re.compile(r"^departs \(order-dependent write: (?P<op>\S+) into a (?P<shape>\([^)]*\)) "
                              r"tensor of strides (?P<strides>\([^)]*\))")


def order_dependent(meta: dict[str, Any]) -> str | None:
    """``writes a self-overlapping (3, 4, 2) tensor of strides (12, 2, 4) with one copy_,
    whose result depends on the write order,`` when the blamed
    stage's own row of ``meta["trail"]`` departs by an order-dependent write; None otherwise.
    Audit 46 (ec5377b470): the title said "mutates an input differently from eager" and
    never that the input overlaps itself, which aot_eager happened to write back right."""
    for said in _blamed_rows(meta):
        m = _ORDER_DEPENDENT.search(said)
        if m:
            return (f"writes a self-overlapping {m['shape']} tensor of strides {m['strides']} "
                    f"with one {m['op']}, whose result depends on the write order,")
    return None


#: Functionalization's refusal of a mutated view it takes for self-overlapping
#: (``While executing unfold, functionalization encountered a tensor being mutated that has
#: internal overlap. ... banned as the behavior is not well defined``).
_OVERLAP_REFUSAL = re.compile(r"While executing (\w+), functionalization encountered a tensor "
                              r"being mutated that has internal overlap")


def overlap_refusal(meta: dict[str, Any], program: Any) -> str | None:
    """Why a crash of functionalization's internal-overlap refusal is a bug, when it is one:
    every view the refused op makes in ``program`` (an IR program; its layouts as
    :func:`aliasfuzz.fuzz.validate.infer` types them) reaches as many storage elements as it
    has, so nothing overlaps and eager's in-place write is well defined. None when the error
    is another, the op is not in the program, or one of its views does overlap (then the
    refusal may be right). Fresh user 55's B3 (b5b1f4cc64): ``x.unfold(0, 3, 2)`` of a
    (3, 3) input is one window, (1, 3, 3) of strides (6, 1, 3), and PyTorch's error "banned
    as the behavior is not well defined" read as intended behaviour."""
    m = _OVERLAP_REFUSAL.search(str(meta.get("explanation") or ""))
    if m is None or program is None:
        return None
    from aliasfuzz.fuzz.validate import infer

    try:
        typed = infer(program)
    except Exception:  # an entry whose program no longer types: say nothing
        return None
    views = [o for st in typed.steps if st.op.op.split(".")[0] == m[1] for o in st.outs
             if o is not None]
    if not views or any(v.has_internal_overlap() for v in views):
        return None
    v = views[0]
    return (f"the {m[1]} view the program writes, {tuple(v.shape)} of strides {tuple(v.stride)}, "
            f"reaches {v.numel} distinct storage elements for its {v.numel} elements: nothing "
            "overlaps, eager's in-place write is well defined, and functionalization refuses it "
            "as overlapping.")


def executor_verdicts(explanation: str) -> dict[str, str]:
    """Each TorchScript executor's verdict in the summary a finding's explanation ends with
    (its last `` | `` part, written by ``oracle/ts_invariants.py``: ``profiling: ok, legacy:
    crash, simple: ok`` gives ``{"profiling": "ok", "legacy": "crash", "simple": "ok"}``);
    the executors it does not name are absent."""
    tail = explanation.rsplit(" | ", 1)[-1]
    return dict(re.findall(r"\b(profiling|legacy|simple): (\w[\w-]*)", tail))


def _one_executor(said: str) -> str | None:
    """``legacy`` or ``profiling`` when the TorchScript explanation's executor summary
    (:func:`executor_verdicts`) has that executor alone departing from eager of the two
    optimizing ones; None otherwise."""
    got = {k: v for k, v in executor_verdicts(said).items() if k != "simple"}
    bad = [k for k in ("profiling", "legacy") if k in got and got[k] != "ok"]
    return bad[0] if len(bad) == 1 and len(got) == 2 else None


def _bug_checks(k: dict[str, Any]) -> tuple[str, ...]:
    """The observables a known bug's ``why`` describes: ``checks`` of the entry's ``known``
    item, or, for entries written before it existed, of the checkout's ``known.toml``."""
    if "checks" in k:
        return tuple(k["checks"])
    from aliasfuzz.campaign.known import DEFAULT, load_known

    try:
        bugs = load_known(DEFAULT.parent)
    except Exception:  # an unreadable list describes nothing: print the why as stored
        return ()
    return next((b.checks for b in bugs if b.issue == k.get("issue")), ())


def known_lines(meta: dict[str, Any], sighting: dict[str, Any] | None = None) -> list[str]:
    """``["known upstream: <issue> — <title>", <why>]`` for an entry whose root cause is a
    known upstream bug (``meta["known"]``, not a merely related one); ``[]`` otherwise.
    The second item (the bug's ``why`` from ``known.toml``) is left out when unset, and when
    the bug's ``checks`` do not include the :func:`observable` of the sighting shown
    (``sighting``, or the entry's own): a why about a lost input update must not explain an
    output that differs through aliasing."""
    k = meta.get("known")
    if not isinstance(k, dict) or k.get("related") or not k.get("issue"):
        return []
    head = f"known upstream: {k['issue']} — {k.get('title', '')}".rstrip(" —")
    if not k.get("why"):
        return [head]
    checks, shown = _bug_checks(k), observable(meta, sighting)
    if checks and not (shown in checks or (shown == "both" and {"values", "inputs"} & set(checks))):
        return [head]
    return [head, k["why"]]



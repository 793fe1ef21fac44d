"""One corpus entry per bug: when two root-cause keys name the same bug.

A root-cause key (:func:`aliasfuzz.campaign.corpus.roots`) is exact: its hash names the
entry folder, so the same key found again is one more hit. It holds the blamed stage's
error (``raises:``, :func:`stage_error`) when there is one: audit 38 found two errors of
functionalization behind the same features in one entry (8157ca25a3). But the fourth audit found five
bugs filed twice under different keys, each difference incidental to the bug:

* a crash whose shrunk programs kept different incidental features (``narrow`` vs
  ``select``, a strided input or not: 43cbefadbc / f50f475f8f, IndexError of
  functionalization), or seen as an exception in one pipeline and as a signal death in
  another (6210c968b2 / 69f02e9212, ``setStorage ... out of bounds``);
* the reinplace pass's unsafe write of one op kind flagged by different ground-truth rules
  (``index_put:rule 1`` / ``index_put:rule 5``: values aliasing the written buffer, read
  later or returned; 1b9297cb46 / 7e27ad2854);
* a shrunk program that kept a view its sibling did not (``_foreach_add_`` of an input or
  of its ``unbind`` views, both dropped by TorchScript: 4cac13817f / b083bfd656).

:func:`same_bug` decides, from two entries' ``meta.json``, that two keys are one bug: the
blamed stage and the verdict are equal, and then

1. **the blamed stage raised**: when either entry's blamed stage departs by raising an
   informative error (:func:`error_class`: the innermost exception's type and message,
   numbers, bracketed lists and quoted names abstracted; ATen's and its Python reference's
   wordings of one check are one error, :data:`_SYNONYMS`), both must have the same one; the
   check is not compared (a signal death blamed on a stage that raised is that stage's
   error; a miscompile whose reinplace-stage graph ATen refuses is that refusal). At the
   ``reinplace`` stage the decision kinds behind the difference must be equal too, the
   ground-truth rule that flagged each unsafe write ignored (``index_put:rule 1`` and
   ``index_put:rule 5`` are both ``index_put:unsafe``): the rule says how a write was
   unsafe in that program, not which bug made it;
2. **otherwise** the check is equal and, at ``reinplace``, the keys are equal (the rule
   numbers are the only evidence of a value departure there, so they are kept), except
   that two ``aliasing`` departures whose every unsafe write is flagged by rule 5 alone (a
   fresh output written into an input's storage, PyTorch #198094's family) are one bug
   whatever the op kinds: rule 5 is about the identity of the returned tensor, not about
   how the op reads or writes (ninth audit: ``index_put:rule 5`` behind an
   ``index_copy(out=)`` and ``auto_functionalized_v2:rule 5`` behind a custom op,
   de21573949 / e65ce44d27, both a full-range ``slice_scatter`` returned aliasing ``x0``);
   and two departures of one decision kind whose every unsafe write is flagged by rule 3
   or rule 5 are one bug whatever the check (values, inputs or aliasing): both rules flag
   a use of the candidate's result where, in place, it is the input's storage, which the
   pass does not check (thirteenth audit: cf2485972f, ``auto_functionalized_v2:rule 3``,
   wrong input values, and e65ce44d27, ``rule 5``, an output aliasing the input: one
   defect, the custom op's result made a graph output by ``remove_noop_ops`` and written
   into the input);
3. **at any other stage** the needed features and the ATen overload packets (registry op
   names without their overload: ``_foreach_add_.List`` is ``_foreach_add_``; at
   ``ts-frontend`` every in-place foreach packet is one, ``_foreach_*_``) of one entry are
   each a subset of the other's (subsumption: the larger shrunk program kept
   incidental statements the shrinker could not remove, and it holds the smaller one's
   whole cause). At ``lowering`` and ``scheduler`` every mutating custom op is one op:
   Inductor runs each as a fallback kernel, and which one it is is incidental to how it
   is ordered (twelfth audit d585dcebc4 / 6d3196a755). When both entries keep a mutating
   custom op there, every pointwise ATen op (``torch.Tag.pointwise``: ``add_``, ``mul.out``,
   ``clone``) is one op too, and the in-place, ``out=`` and functional spellings one
   feature: the bug is a read scheduled after the fallback that writes what it reads, the
   reader is one ``Pointwise`` node whatever its arithmetic, and functionalization turned
   every spelling into a functional op before Inductor saw it (nineteenth audit:
   9b5ae05429, ``clone``/``add_`` read before ``fz.copy_into``, and 1b9297cb46,
   ``mul(out=)`` before ``fz.halve_``, filed twice).

Two more rules come before every rule above:

* at ``ts-frontend``, two departures that each keep an in-place foreach op, and besides it
  only ops that write nothing (views, functional, scatter and factory ops, custom ops that
  mutate nothing), with equal input features, are one bug whatever else they keep: those
  ops only build the list the frontend's foreach write is lost from (H100 campaign of
  2026-12-06, empty corpus: ``unbind``, ``clone``, ``zeros`` and ``fz.strides_of`` around
  one ``_foreach_add_`` filed four times, none a subset of another, where subsumption
  merges only when the bare foreach program happened to be filed first);
* at ``lowering`` and ``scheduler``, two findings that each disappear when Dynamo's own
  decompositions are off (the trail's ``enabled-by-dynamo ... agrees``,
  :func:`aliasfuzz.oracle.blame.dynamo_rewrite`) and keep the same rewritten op
  (``addcmul_`` into ``inductor_prims.fma``) are one bug whatever the verdict, check and
  error: the rewrite's lowering is what breaks, and how the break shows (a wrong dtype, a
  broadcast assert on the promoted buffer) follows from the program's dtypes (audit 50:
  6d3196a755, an int64 result returned as float32, and baa68a8925, ``Broadcast failed in
  ExpandView`` on the same promotion of an int8 view, filed twice).

At ``ts-optimizer``, before every rule above: two departures of the **legacy executor's
autograd graph** are one bug whatever the verdict and check. That is a departure of the legacy
executor alone (the explanation ends ``| profiling: ok, legacy: <verdict>, simple: ok``) that
makes a value require grad which eager's does not, or raises from autograd (``Autograd not
support dtype: Bool``): the legacy executor wraps the graph in a ``prim::DifferentiableGraph``
although no input requires grad (audit 40: 1ccd29630f, the crash, and 4402686baf and
c45a6c295f, an input and an output left requiring grad, filed three times).

Known-bug keys (``check`` ``known``) are merged by their issue already and are left alone.
An error is uninformative, and rules 2-3 apply instead, when its message has fewer than
six words after normalization (``list index out of range``), is Inductor's ``Set
TORCHDYNAMO_VERBOSE`` boilerplate, or is a worker death (nothing shows where). The rules never merge two rows of the first audit's answer key
(``shared/audit/labels.tsv``) with different roots (``tests/corpus/test_audit_labels.py``).
"""

from __future__ import annotations

import re
from typing import Any

from aliasfuzz.campaign._repro_words import control_agrees, executor_verdicts

__all__ = ["error_class", "find_same", "same_bug", "stage_error"]

#: An exception type name followed by its message, as the trail and explanations print it.
_TYPED = re.compile(r"\b([A-Z]\w*(?:Error|Exception|Failed|Died))\b:\s?")

#: Messages that say nothing about the bug (Inductor wraps every compile error in them).
_BOILERPLATE = re.compile(r"^(Set TORCHDYNAMO_VERBOSE|worker died|$)")

#: Fewer words than this say too little to tell bugs apart (``list index out of range``).
_WORDS = 6

#: Abstractions of incidental detail, applied in order.
_ABSTRACT = (
    (re.compile(r"\[[^\[\]]*\]"), "[*]"),  # shapes, strides, index lists
    (re.compile(r"'[^']*'|\"[^\"]*\""), "'*'"),  # quoted names and shapes
    # an object's address (``<... object at 0x7f6fd8484b10>``): its hex letters survived the
    # digits' abstraction, so one error split by the run's addresses
    (re.compile(r"0x[0-9a-fA-F]+"), "ADDR"),
    (re.compile(r"\d+"), "N"),  # numbers, numbered names (s47, arg0_1, buf3)
    # shapes printed as tuples: "(3,) (actual) vs (3, 1) (expected)" and "(1, 9) ... (1, 3)"
    # are one ViewMeta replay assertion (eighth audit: 63f507a08e, f50f475f8f)
    (re.compile(r"\(N(?:, ?N)*,?\)|\(\)"), "(*)"),
    (re.compile(r"\s+"), " "),
)


def error_class(text: str) -> str | None:
    """The normalized error of ``text`` (a trail entry ``departs (raises T: msg...)`` or an
    explanation): ``"<innermost type>: <message>"`` with bracketed lists, quoted strings and
    numbers abstracted, at most 120 characters; None when no typed error is there or the
    message is uninformative (see the module docstring).

    >>> error_class("raises IndexError: Dimension out of range (expected to be "
    ...             "in range of [-1, 0], but got 2)")
    'IndexError: Dimension out of range (expected to be in range of [*], but got N)'
    """
    hits = list(_TYPED.finditer(text))
    if not hits:
        return None
    last = hits[-1]
    if last.group(1) == "WorkerDied":
        return None
    msg = text[last.end():].split("; the final pipeline's error differs")[0]
    msg = msg.split("; not the finding's error")[0].strip()
    if _BOILERPLATE.match(msg) or len(re.findall(r"[A-Za-z]{2,}", msg)) < _WORDS:
        return None
    for pattern, repl in _ABSTRACT:
        msg = pattern.sub(repl, msg)
    return f"{last.group(1)}: {msg.strip()}"[:120]


#: Blamed stages named by a control, not by a cut of their own: their error is the one the
#: cut's full-Inductor stages raised (``oracle.blame.scalar_codegen``,
#: ``oracle.blame.donated_buffer``).
_CUT_AS = {"codegen:cpp-vectorized": ("lowering", "scheduler"),
           "backward:donated-buffer": ("lowering", "scheduler")}


#: Normalized errors that are one check of PyTorch's worded twice: by ATen's C++ kernel and
#: by its Python reference, which fake tensors run while tracing. Which one a finding
#: raises depends on whether the pipeline traced the program (aot_eager's
#: functionalization) or ran it (``torch.func.functionalize`` under ``fx-reinplace``), not
#: on the bug (H100 campaign of 2026-12-06: 0583e433ff and 613be8c220, one int32 view,
#: expanded and written in place, whose inverse ``sum`` promotes to int64).
_SYNONYMS = (
    (re.compile(r"^RuntimeError: (expand: attempting to expand a dimension of length|"
                r"The expanded size of the tensor \(\*\) must match the existing size)"),
     "RuntimeError: expand to a size other than the dimension's own"),
)


def _synonym(error: str | None) -> str | None:
    """``error`` (a normalized error, :func:`error_class`) with PyTorch's two wordings of one
    check (:data:`_SYNONYMS`) made one; other errors unchanged."""
    for pattern, same in _SYNONYMS:
        if error is not None and pattern.match(error):
            return same
    return error


def stage_error(meta: dict[str, Any]) -> str | None:
    """The normalized error of the entry's blamed stage, from its blame trail. An error whose
    message says nothing (an ``assert`` without one) is told apart by where Inductor raised
    it when the trail names that frame (``raised-in``, :data:`aliasfuzz.oracle.blame.RAISED_IN`):
    ``AssertionError raised in codegen (torch/_inductor/codegen/cpp.py:store)`` (thirtieth
    audit: ``index_add_``, ``index_put_(accumulate=True)`` and ``index_add(out=)`` into a
    size-1 target trip one ``CppVecKernel.store`` assert, and were filed three times)."""
    stage = meta["root"]["stage"]
    trail = meta.get("trail") or []
    names = _CUT_AS.get(stage, (stage,))
    for name, what in trail:
        if name in names and what.startswith("departs ("):
            text = what[len("departs ("):].removesuffix(")")
            return error_class(text) or _raise_site(text, trail)
    return None


def _raise_site(text: str, trail: list) -> str | None:
    """``<innermost exception type> raised in <component (file:function)>`` for a typed
    error of ``text`` whose message is uninformative, from the trail's ``raised-in`` entry;
    None without one, or for a worker death."""
    hits = list(_TYPED.finditer(text))
    site = next((str(what) for name, what in trail if name == "raised-in"), None)
    if not hits or site is None or hits[-1].group(1) == "WorkerDied":
        return None
    return f"{hits[-1].group(1)} raised in {site}"


#: Registry namespaces of aliasfuzz's own custom ops and kernels: their dot is no overload.
_NAMESPACES = ("fz", "tk")


def _ops(meta: dict[str, Any], one_pointwise: bool = False) -> set[str]:
    # ATen overload packets: ``_foreach_add_.List`` and ``_foreach_add_.Scalar`` are one op
    # (fifth audit: c70b39c863 / b083bfd656, TorchScript drops either form), while
    # ``add_`` and ``add.out`` stay other ops; a namespace (``fz.scaled``) is not an overload
    ops = set()
    frontend = meta["root"]["stage"] == "ts-frontend"
    for name in meta.get("ops") or []:
        head, _, _ = name.partition(".")
        if frontend and _FOREACH_INPLACE.match(head):
            # TorchScript's frontend reads only the Tensor(a!)[] annotation every in-place
            # foreach op shares, never its arithmetic (twelfth audit: _foreach_mul_,
            # _foreach_lerp_ and _foreach_add_ on a local list, all dropped: 4cac13817f,
            # b083bfd656, c70b39c863, e3ba2d221d, f7c84144f5 filed as five entries)
            head = "_foreach_*_"
        if meta["root"]["stage"] in _COMPILED and _mutating_custom(name):
            # Inductor runs every mutating custom op as one kind of fallback kernel: which
            # op it is says nothing about how lowering or the scheduler orders it (twelfth
            # audit: d585dcebc4 with fz.copy_into and 6d3196a755 with fz.add_one_, both a
            # pointwise read of a buffer scheduled after the fallback that writes it)
            name = _MUTATING_CUSTOM
        elif one_pointwise and _pointwise(name):
            # ``same_bug``: around a mutating fallback, any pointwise reader is one op
            head = name = _POINTWISE
        ops.add(name if head in _NAMESPACES else head)
    return ops


#: The stages of Inductor's own compile, where :func:`_ops` names every mutating custom op
#: by this one name.
_COMPILED = ("lowering", "scheduler")
_MUTATING_CUSTOM = "fz.<mutating custom op>"


def _mutating_custom(name: str) -> bool:
    from aliasfuzz.fuzz.ops import REGISTRY
    from aliasfuzz.fuzz.ops.core import OpKind

    row = REGISTRY.get(name)
    return row is not None and row.kind is OpKind.CUSTOM and bool(row.mutates)


#: An in-place foreach overload packet (``_foreach_add_``), not a functional one.
_FOREACH_INPLACE = re.compile(r"^_foreach_\w+_$")


def _decision_kinds(evidence: list[str]) -> set[str]:
    # the error (``raises:``, corpus.roots) is compared by stage_error, and entries written
    # before it was keyed have none
    return {re.sub(r":rule \d+$", ":unsafe", e) for e in evidence if not e.startswith("raises:")}


def _only_rules(root: dict[str, Any], *rules: int) -> bool:
    """Whether ``root`` has evidence and every unsafe write behind it is flagged by one of
    the ground truth's ``rules`` (:mod:`aliasfuzz.oracle.candidates`)."""
    ev = root.get("evidence") or []
    return bool(ev) and all(e.endswith(tuple(f":rule {r}" for r in rules)) for e in ev)


#: Rules 3 and 5 flag a use of the candidate's *result* where, written in place, it is the
#: input's storage: after that storage changes again (3) or as an output eager returns
#: fresh (5). ``reinplace.py``'s ``can_inplace`` looks at later uses of the old views only:
#: PyTorch #198094's family.
_OUTLIVES = (3, 5)


#: The input features of a root's evidence (:func:`aliasfuzz.campaign.reduce.needed_features`).
_INPUT_FEATURES = frozenset({"aliased-inputs", "strided-inputs", "requires-grad"})

#: Op kinds that write no argument.
_WRITES_NOTHING = ("view", "functional", "factory", "scatter")


def _input_features(root: dict[str, Any]) -> set[str]:
    return {e for e in root.get("evidence") or [] if e in _INPUT_FEATURES}


def _writes_nothing(name: str) -> bool:
    """Whether registry op ``name`` writes none of its arguments; False for a name the
    registry does not know (it may write)."""
    from aliasfuzz.fuzz.ops import REGISTRY
    from aliasfuzz.fuzz.ops.core import OpKind

    row = REGISTRY.get(name)
    if row is None:
        return False
    return row.kind.value in _WRITES_NOTHING or (row.kind is OpKind.CUSTOM and not row.mutates)


def _frontend_foreach(meta: dict[str, Any]) -> bool:
    """Whether ``meta`` is a ``ts-frontend`` departure whose only writes are in-place
    foreach ops (the module docstring's first extra rule)."""
    if meta["root"]["stage"] != "ts-frontend":
        return False
    ops = meta.get("ops") or []
    foreach = [o for o in ops if _FOREACH_INPLACE.match(o.partition(".")[0])]
    return bool(foreach) and all(_writes_nothing(o) for o in ops if o not in foreach)


def _dynamo_rewritten(meta: dict[str, Any]) -> set[str]:
    """The ops of :data:`aliasfuzz.oracle.blame.DYNAMO_REWRITES` that ``meta`` keeps, when
    its blame is on an Inductor stage and the trail says the finding disappears with
    Dynamo's decompositions off; else the empty set."""
    from aliasfuzz.oracle.blame import DYNAMO_REWRITES, ENABLED_BY_DYNAMO

    if meta["root"]["stage"] not in _COMPILED:
        return set()
    if not control_agrees(meta, ENABLED_BY_DYNAMO):
        return set()
    return {o.partition(".")[0] for o in meta.get("ops") or []} & set(DYNAMO_REWRITES)


#: What the legacy executor's autograd graph does to a program that asked for no gradient.
_AUTOGRAD_MARK = re.compile(r"requires_grad eager False, torchscript True|\bAutograd\b|"
                            # audit 51: the same graph's refusals in autograd's own words
                            # (30c2059388, e88cc7aa42 beside 1ccd29630f)
                            r"variables that require grad|don't support automatic differentiation")


def _legacy_autograd(meta: dict[str, Any]) -> bool:
    """Whether ``meta``'s departure is the legacy executor's autograd graph (the module
    docstring's ``ts-optimizer`` rule): only the legacy executor departs, by a value left
    requiring grad or an error raised from autograd."""
    said = str(meta.get("explanation") or "")
    # TorchScript's explanation closes with every executor's verdict
    ran = executor_verdicts(said)
    legacy_only = (ran.get("profiling") == "ok" and ran.get("simple") == "ok"
                   and ran.get("legacy") in ("crash", "miscompile"))
    return (meta["root"]["stage"] == "ts-optimizer" and legacy_only
            and bool(_AUTOGRAD_MARK.search(said)))


def same_bug(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """Whether entries with ``meta.json`` ``a`` and ``b`` (each with ``root``, ``trail``,
    ``ops``; ``explanation`` at ``ts-optimizer``) are one bug by the rules of the module
    docstring. Equal roots are one bug."""
    ra, rb = a["root"], b["root"]
    if ra == rb:
        return True
    if "known" in (ra["check"], rb["check"]):
        return False
    if _legacy_autograd(a) and _legacy_autograd(b):
        return True
    if _frontend_foreach(a) and _frontend_foreach(b) and (
        _input_features(ra) == _input_features(rb)
    ) and (ra["verdict"], ra["check"]) == (rb["verdict"], rb["check"]):
        return True
    rewritten = _dynamo_rewritten(a)
    if rewritten and rewritten & _dynamo_rewritten(b):
        return True
    if (ra["stage"], ra["verdict"]) != (rb["stage"], rb["verdict"]):
        return False
    ea, eb = stage_error(a), stage_error(b)
    if ea is not None or eb is not None:
        if ra["stage"] == "reinplace" and (
            _decision_kinds(ra["evidence"]) != _decision_kinds(rb["evidence"])
        ):
            return False
        return _synonym(ea) == _synonym(eb)
    if ra["stage"] == "reinplace" and _only_rules(ra, *_OUTLIVES) and _only_rules(rb, *_OUTLIVES) and (
        _decision_kinds(ra["evidence"]) == _decision_kinds(rb["evidence"])
    ):
        return True
    if ra["check"] != rb["check"]:
        return False
    if ra["stage"] == "reinplace":
        return ra["check"] == "aliasing" and _only_rules(ra, 5) and _only_rules(rb, 5)
    fa, fb = set(ra["evidence"]), set(rb["evidence"])
    oa, ob = _ops(a), _ops(b)
    if _MUTATING_CUSTOM in oa and _MUTATING_CUSTOM in ob:  # only at _COMPILED stages
        fa, fb = _one_spelling(fa), _one_spelling(fb)
        oa, ob = _ops(a, one_pointwise=True), _ops(b, one_pointwise=True)
    return (fa <= fb and oa <= ob) or (fb <= fa and ob <= oa)


#: The op kinds that spell one computation three ways (``x.add_(y)``, ``add(x, y, out=x)``,
#: ``x = x + y``): one functional op (and a ``copy_``) once functionalized.
_SPELLINGS = frozenset({"inplace", "out", "functional"})
_ONE_SPELLING = "inplace|out|functional"
_POINTWISE = "<pointwise ATen op>"


def _one_spelling(features: set[str]) -> set[str]:
    return {_ONE_SPELLING if f in _SPELLINGS else f for f in features}


def _pointwise(op: str) -> bool:
    """Whether ATen tags registry op ``op`` pointwise (``torch.Tag.pointwise``): the
    overload it names (``add_.Scalar``, ``mul.out``), else the packet's ``default`` or
    ``Tensor`` overload (``clone``, ``mul``); False for a name ATen does not have."""
    import torch

    head, _, overload = op.partition(".")
    if head in _NAMESPACES:
        return False
    packet = getattr(torch.ops.aten, head, None)
    if packet is None:
        return False
    names = packet.overloads()
    chosen = [overload] if overload in names else [o for o in ("default", "Tensor") if o in names]
    return any(torch.Tag.pointwise in getattr(packet, o).tags for o in chosen)


def find_same(entries: list[tuple[Any, dict[str, Any]]], meta: dict[str, Any]) -> Any | None:
    """The first of ``entries`` (``(path, meta)`` pairs, in name order) that is the same bug
    as ``meta`` (:func:`same_bug`), or None."""
    for path, other in entries:
        if isinstance(other.get("root"), dict) and same_bug(other, meta):
            return path
    return None

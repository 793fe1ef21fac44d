"""How a repro runs and compares: the settings and code lines :mod:`.repro` puts into its
template (:mod:`._repro_template`) for each way of running a program.

* :func:`compare`: what is compared and how (``want``/``got`` expressions over the eager
  outputs ``want``, the compiled ones ``got``, and the two input tuples ``a``/``b``);
* :func:`jit_settings`: TorchScript's executor and fuser knobs for the blamed stage;
* :func:`inductor_settings`: ``torch._inductor.config`` lines from the pipeline options;
* :func:`copy_rules`: for a missed reinplace, the lines that list the copies Inductor's
  reinplace pass left, per claimed decision kind (``passes/decisions.py``'s table:
  scatters, ``index_put``, foreach ops, Triton wrappers' ``tensors_to_clone``,
  ``auto_functionalized``'s ``only_clone_these_tensors``, input copy-backs), mirroring
  ``torch/_inductor/fx_passes/reinplace.py`` (torch 2.13 and 2.11).
"""

from __future__ import annotations

import re
from typing import Any

from aliasfuzz.campaign._repro_words import ts_check

__all__ = ["compare", "copy_rules", "fx_comment", "inductor_settings", "jit_settings"]

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


def compare(plan_: Any, meta: dict[str, Any]) -> tuple[str, str, str, str]:
    """``(check, what, want, got)``: what the repro compares, as the template needs it."""
    if plan_.verdict in ("crash", "timeout"):
        return "crash", "", "", ""  # a backward's crash (check grads): the template's backward
    if plan_.verdict == "missed-reinplace":
        return "copies", "", "", ""
    if plan_.verdict == "invariant":
        return "invariant", "", "", ""
    check = plan_.check
    if check == "torchscript" and plan_.own:
        check = ts_check(meta.get("explanation") or "")
    if check not in ("values", "inputs", "aliasing", "requires_grad", "grads"):
        check = "both"
    return {
        "values": ("values", "outputs", "want", "got"),
        "inputs": ("inputs", "inputs after the call", "a", "b"),
        "both": ("both", "outputs and inputs after the call", "(want, a)", "(got, b)"),
        "aliasing": ("aliasing", "storages shared by outputs", "shares(want, a)", "shares(got, b)"),
        # the backward of one loss on both sides (aliasfuzz.fuzz.grads.loss, spelled out),
        # run once per side by the template: a second backward finds its saved tensors freed
        # and raised in the error message of m9's case repro (fresh user 20)
        "grads": ("grads", "gradients of sum(o.sum()) over the floating outputs", "want", "got"),
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


def _showing_stage(verdict: str, meta: dict[str, Any]) -> str:
    trail = [(str(st), str(what)) for st, what in meta.get("trail") or []]
    if not trail:
        return (meta.get("root") or {}).get("stage") or ""
    return next((st for st, what in trail if what.startswith(f"departs ({verdict}")), "")


def jit_settings(plan_: Any, meta: dict[str, Any]) -> tuple[list[str], str, int, str]:
    """``(settings, script, calls, note)`` of a TorchScript repro: the executor and fuser
    of the first stage that shows the finding (``ts-frontend``: the simple executor;
    ``ts-optimizer``: fuser off; ``ts-fuser``: TensorExpr fuser on CPU), as many calls as
    the failing one needs. That stage is the first of the ``trail`` that departs with the
    finding's verdict (the blamed stage may depart otherwise: a graph invariant where the
    finding is a miscompile), else the blamed stage when there is no trail, else the
    pipeline's own settings."""
    o = dict(plan_.options.get("torchscript") or {})
    stage = _showing_stage(plan_.verdict, meta)
    said = re.match(r"(profiling|legacy|simple) call (\d+)", meta.get("explanation") or "")
    said = said if plan_.own else None
    chosen = "simple" if not o.get("optimize", True) else (
        "profiling" if o.get("profiling_executor", True) else "legacy")
    # the executor the finding was seen under (its explanation says so) is the one the cut
    # ran (oracle._judge.executor_options): the eighth audit's 7dd2e95937 failed under the
    # legacy executor only, and a repro under the profiling one exited 0
    executor = {"ts-frontend": "simple"}.get(stage) or (said.group(1) if said else chosen)
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


def inductor_settings(plan_: Any) -> tuple[list[str], str]:
    """``(config lines, extra torch.compile arguments)`` from the entry's pipeline options."""
    o = plan_.options
    lines = []
    if o.get("auto_functionalized_v2") is False:
        lines.append("torch._inductor.config.enable_auto_functionalized_v2 = False")
    lines += [f"torch._inductor.config.{k} = {v!r}" for k, v in (o.get("inductor_config") or {}).items()]
    return lines, (", dynamic=True" if o.get("dynamic") else "")


def copy_rules(meta: dict[str, Any], plan_: Any) -> list[str]:
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


def fx_comment(stage: str | None) -> str:
    return {
        # the code below runs the whole pipeline (reinplace too, as aliasfuzz judged it): say
        # that the traced graph departs before reinplace, not that reinplace is left out
        "functionalization": "# blamed stage: functionalize (the traced gm already departs from "
                             "eager; reinplace, run as the pipeline does, is not needed for it)",
        "decomposition": "# blamed stage: make_fx tracing (the traced gm already departs from "
                         "eager; reinplace, run as the pipeline does, is not needed for it)",
        "reinplace": "# blamed stage: torch.fx.passes.reinplace (functionalize alone agrees; "
                     "torch.compile runs Inductor's own pass, not this one)",
    }.get(stage or "", "# no stage blamed")



"""Process and per-program hygiene for compiling programs under test.

Two traps make a compiler harness lie silently (``shared/notes/pytorch-seams.md`` §5):

* **caches**: with the AOTAutograd / FX graph caches on, a program compiled a second time
  (after a reset, or in another process) is served from the cache and the reinplace pass
  never runs; :func:`setup_process` turns every cache off and gives the process its own
  ``TORCHINDUCTOR_CACHE_DIR``;
* **recompile limits**: generated functions share code objects, so without
  ``torch._dynamo.reset()`` per program Dynamo hits ``recompile_limit`` and silently runs
  the program eagerly; :func:`reset_program` resets, and :func:`setup_process` makes a
  limit hit an error (``fail_on_recompile_limit_hit``);
* **lowerings made on first use**: Inductor lowers an op it has no lowering for (a custom
  op, an ATen op on its fallback list) by registering a fallback kernel the first time a
  graph calls it (``torch/_inductor/graph.py`` ``call_function`` -> ``make_fallback``),
  into module tables that ``torch._dynamo.reset()`` keeps. The reinplace pass reads one of
  them (``fx_utils.is_node_realized``: ``node.target in lowering.fallbacks``), so a
  program compiled after another that lowered the same custom op is reinplaced otherwise
  than in a fresh process: campaign 41 shrank a finding to a program that showed it only
  after an earlier compile in its worker, and its repro.py, a fresh process, did not
  (miscompile-scheduler-3e4273b209). :func:`reset_program` puts those tables back as they
  were when the process set up (:data:`LOWERING_TABLES`).

:func:`resolve` is the one way adapters look up a PyTorch internal: it raises
:class:`HookNotFound`, naming the torch version, when the attribute moved (both live in
:mod:`aliasfuzz.fuzz.process`, the lowest layer, and are re-exported here).
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import torch

from aliasfuzz.fuzz import process
from aliasfuzz.fuzz.process import TORCH_CHECKED, HookNotFound, resolve

__all__ = ["TORCH_CHECKED", "HookNotFound", "reset_program", "resolve", "setup_process"]

_SETUP_DONE = False

#: ``torch._inductor.lowering``'s tables that a first lowering of an op adds to
#: (``make_fallback``: ``register_lowering``, ``fallback_handler``,
#: ``add_needs_realized_inputs``, ``add_layout_constraint``); torch 2.11-2.13.
LOWERING_TABLES = ("lowerings", "fallbacks", "needs_realized_inputs", "_maybe_layout_constraints")
#: Each table's keys once the process set up (:func:`setup_process`).
_LOWERING_BASELINE: dict[str, frozenset] = {}


def _cache_dir() -> Path:
    base = os.environ.get("ALIASFUZZ_WORKDIR") or tempfile.gettempdir()
    path = Path(base) / f"aliasfuzz-{os.getuid()}" / f"inductor-cache-{os.getpid()}"
    path.mkdir(parents=True, exist_ok=True)
    return path


def setup_process() -> None:
    """Turn compile caches off, isolate the cache dir, make recompile-limit hits errors.

    Idempotent; every adapter calls it. The process setup every run needs
    (:func:`aliasfuzz.fuzz.process.setup`: the CPU Triton layer) comes first. ``TORCHINDUCTOR_CACHE_DIR`` is set only when the
    user has not set it (a per-process directory under ``ALIASFUZZ_WORKDIR`` or the temp
    dir). A campaign's workers may share one on purpose
    (:func:`aliasfuzz.campaign.pool.kernel_cache_dir`): with the graph caches off, what
    lives there is kernel-level only, keyed by the source generated after every pass.
    """
    global _SETUP_DONE
    process.setup()
    if _SETUP_DONE:
        return
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", str(_cache_dir()))
    import torch._dynamo.config as dynamo_config
    import torch._functorch.config as functorch_config
    import torch._inductor.config as ind_config

    # The individual switches rather than force_disable_caches: that one also disables
    # Dynamo's PGO with a warning per compile, and warnings are errors in our tests.
    ind_config.fx_graph_cache = False
    ind_config.fx_graph_remote_cache = False
    ind_config.autotune_local_cache = False
    functorch_config.enable_autograd_cache = False
    dynamo_config.automatic_dynamic_local_pgo = False
    dynamo_config.automatic_dynamic_remote_pgo = False
    dynamo_config.fail_on_recompile_limit_hit = True
    # A user kernel or custom op failing inside Dynamo must be a failure, never eager.
    dynamo_config.suppress_errors = False
    # the tables as a fresh process has them; importing the module here costs no more than
    # the first compile would
    for name in LOWERING_TABLES:
        _LOWERING_BASELINE[name] = frozenset(resolve("torch._inductor.lowering", name))
    _SETUP_DONE = True


def _restore_lowerings() -> None:
    """Drop what lowerings made since :func:`setup_process` added to Inductor's tables."""
    for name, before in _LOWERING_BASELINE.items():
        table = resolve("torch._inductor.lowering", name)
        for key in [k for k in table if k not in before]:
            if isinstance(table, dict):
                del table[key]
            else:
                table.discard(key)


def reset_program() -> None:
    """Per-program reset: Dynamo's code cache and guards, the reinplace counters, and the
    fallback lowerings earlier programs made (see the module docstring): each program
    compiles as it would first in a fresh process, as its ``repro.py`` does."""
    setup_process()
    torch._dynamo.reset()
    _restore_lowerings()
    resolve("torch._dynamo.utils", "ReinplaceCounters").clear()

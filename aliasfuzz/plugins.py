"""Pass plugins: Python files that wrap or replace a pass under test before any program runs.

``aliasfuzz run --plugin FILE.py`` (also ``check`` and ``replay``; the flag repeats) imports
each file in the command's own process first (a plugin that fails to import is a one-line
error and exit 2, before any work) and then in every worker process, before the worker
reports ready. Workers find the files through the ``ALIASFUZZ_PLUGINS`` environment variable
(absolute paths joined by ``os.pathsep``), which :func:`activate` sets and
:func:`load_from_env` reads. A campaign records its plugins in ``options.json``, so
``run --resume`` loads them again. The driver process, where programs are generated, has
the plugins loaded too. Callers of :func:`aliasfuzz.campaign.driver.run_campaign` from
Python call :func:`activate` with ``opts.plugins`` first (the CLI does).

The contract. A plugin is a plain Python file; it may act by module-level side effects,
or define ``install(api)``, which is called once with a :class:`PluginAPI`. Patches made
through the API are recorded and undone by :func:`unload_all` (tests load and unload
mutants in one process); module-level side effects are not undone. A plugin may replace:

* Inductor's reinplace pass: the module global
  ``torch._inductor.fx_passes.post_grad.reinplace_inplaceable_ops`` (``post_grad_passes``
  looks it up at call time) and ``torch._inductor.fx_passes.reinplace.
  reinplace_inplaceable_ops_core``. :func:`aliasfuzz.passes.spy.reinplace_spy` resolves
  both when each compile starts, so the spy wraps the plugin's version and decisions are
  still observed;
* the helpers that function reads as module globals of ``torch._inductor.fx_passes.
  reinplace``: ``compute_overlapping_tensors`` (the overlap test behind ``_overlap``),
  ``get_node_storage``, ``inplaceable_ops``, ``should_reinplace_scatter`` and
  ``scatter_always_uses_mutation`` (the scatter heuristics). ``can_inplace``,
  ``_overlap`` and ``any_use_of_views_after_node`` are closures inside the core function:
  change them with :meth:`PluginAPI.mutate_source`, which recompiles an edited copy of a
  function's source in its own module;
* ``torch.fx.passes.reinplace.reinplace`` (looked up at call time by the ``fx-reinplace``
  pipeline) and its module globals, e.g. ``_get_all_later_node_usages``;
* Triton mutation analysis: ``torch._higher_order_ops.triton_kernel_wrap.
  identify_accessed_tensors`` and ``get_mutated_tensors`` (both looked up at call time by
  the functionalization of ``triton_kernel_wrapper_mutation`` and by Inductor's lowering).
  torch 2.11 lacks ``identify_accessed_tensors``: its ``get_mutated_tensors`` calls
  ``identify_mutated_tensors``, which returns the mutated tensor names (``list[str]``)
  instead of a ``TensorAccesses`` of reads and writes; patching the 2.13 name there raises
  ``HookNotFound`` naming it (:data:`ABSENT_ON_TORCH_2_11`). ``get_mutated_tensors`` has
  one signature and meaning in both;
* ``aot_eager``'s compilers: ``torch._dynamo.backends.debugging.boxed_nop``, which the
  ``aot_eager`` backend looks up when called and hands both its forward graph (through the
  harness's own forward compiler) and its backward graph (bench/mutants/m9);
* TorchScript: the knobs in ``torch._C`` (``_jit_set_profiling_executor``,
  ``_jit_set_num_profiled_runs``, ...; note :func:`aliasfuzz.passes.torchscript.jit_knobs`
  sets them per run) and ``torch._C._last_executed_optimized_graph``, through which the
  harness observes the executed graph.

Names are listed in :data:`HOOKS`; each is resolved through
:func:`aliasfuzz.passes.hygiene.resolve`, so a moved hook fails loudly. Those torch 2.11
lacks are in :data:`ABSENT_ON_TORCH_2_11`, with what 2.11 has instead.
"""

from __future__ import annotations

import hashlib
import importlib.machinery
import importlib.util
import inspect
import os
import sys
import textwrap
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from aliasfuzz.errors import InvalidArgument

__all__ = [
    "ABSENT_ON_TORCH_2_11",
    "ENV",
    "HOOKS",
    "PluginAPI",
    "activate",
    "load_from_env",
    "load_plugins",
    "unload_all",
]

#: Environment variable naming the plugin files a worker imports before it reports ready.
ENV = "ALIASFUZZ_PLUGINS"

#: ``(module, attribute)`` pairs a plugin may replace (checked on torch 2.13.0).
HOOKS: tuple[tuple[str, str], ...] = (
    ("torch._inductor.fx_passes.post_grad", "reinplace_inplaceable_ops"),
    ("torch._inductor.fx_passes.reinplace", "reinplace_inplaceable_ops_core"),
    ("torch._inductor.fx_passes.reinplace", "compute_overlapping_tensors"),
    ("torch._inductor.fx_passes.reinplace", "get_node_storage"),
    ("torch._inductor.fx_passes.reinplace", "inplaceable_ops"),
    ("torch._inductor.fx_passes.reinplace", "should_reinplace_scatter"),
    ("torch._inductor.fx_passes.reinplace", "scatter_always_uses_mutation"),
    ("torch.fx.passes.reinplace", "reinplace"),
    ("torch.fx.passes.reinplace", "_get_all_later_node_usages"),
    ("torch._higher_order_ops.triton_kernel_wrap", "identify_accessed_tensors"),
    ("torch._higher_order_ops.triton_kernel_wrap", "get_mutated_tensors"),
    ("torch._C", "_last_executed_optimized_graph"),
    ("torch._dynamo.backends.debugging", "boxed_nop"),
)

#: Hooks of :data:`HOOKS` that torch 2.11 lacks: ``(module, attribute) -> (what 2.11 has
#: instead, how it differs)``. Checked absent on torch 2.11.0 and present on 2.13.0 (2.12
#: not checked). Patching one there raises ``HookNotFound`` with this hint; a plugin meant
#: for 2.11 patches the replacement, or ``get_mutated_tensors``, which both releases have.
ABSENT_ON_TORCH_2_11: dict[tuple[str, str], tuple[str, str]] = {
    ("torch._higher_order_ops.triton_kernel_wrap", "identify_accessed_tensors"): (
        "identify_mutated_tensors",
        "same arguments (kernel, kwargs, tma_descriptor_metadata), but returns the names of "
        "the mutated tensor arguments (list[str]), not a TensorAccesses of reads and writes",
    ),
}

_MISSING = object()
_LOADED: dict[str, PluginAPI] = {}


class PluginAPI:
    """What ``install(api)`` receives: recorded, undoable patches of module attributes.

    ``name`` is the plugin file's stem. Every method raises
    :class:`~aliasfuzz.passes.hygiene.HookNotFound` when the target does not exist.
    """

    def __init__(self, name: str):
        self.name = name
        self._undo: list[tuple[Any, str, Any]] = []

    def original(self, module: str, attr: str) -> Any:
        """The current value of ``module.attr`` (call it before patching to wrap it).

        Raises :class:`~aliasfuzz.passes.hygiene.HookNotFound` when it does not exist; for a
        hook of :data:`ABSENT_ON_TORCH_2_11` the message names what that release has instead.
        """
        from aliasfuzz.passes.hygiene import HookNotFound, resolve

        try:
            return resolve(module, attr)
        except HookNotFound as e:
            instead = ABSENT_ON_TORCH_2_11.get((module, attr))
            if instead is None:
                raise
            raise HookNotFound(
                f"{e}; torch 2.11 has {module}.{instead[0]} instead ({instead[1]})"
            ) from e

    def patch(self, module: str, attr: str, value: Any) -> Any:
        """Set ``module.attr = value``; return the previous value (undone by :meth:`undo`)."""
        import importlib

        old = self.original(module, attr)
        mod = importlib.import_module(module)
        self._undo.append((mod, attr, mod.__dict__.get(attr, _MISSING)))
        setattr(mod, attr, value)
        return old

    def wrap(self, module: str, attr: str, make: Callable[[Any], Any]) -> None:
        """Replace ``module.attr`` by ``make(original)``."""
        self.patch(module, attr, make(self.original(module, attr)))

    def mutate_source(
        self, module: str, function: str, edits: Sequence[tuple[str, str]]
    ) -> Callable:
        """Replace ``module.function`` by a copy of its source with ``edits`` applied.

        Each edit ``(old, new)`` must match exactly once in the dedented source (a seeded
        fault that silently stops applying after a torch upgrade would measure nothing);
        otherwise :class:`InvalidArgument`. The copy is compiled in the module's globals,
        so it sees (and sees patches of) the same helpers. Returns the new function.
        """
        fn = self.original(module, function)
        src = textwrap.dedent(inspect.getsource(fn))
        for old, new in edits:
            n = src.count(old)
            if n != 1:
                raise InvalidArgument(
                    f"plugin {self.name}: edit of {module}.{function} matches {n} times "
                    f"(must be once): {old.strip()[:60]!r}"
                )
            src = src.replace(old, new)
        mod = sys.modules[fn.__module__]
        code = compile(src, f"<plugin {self.name}: {module}.{function}>", "exec")
        scope: dict[str, Any] = {}
        exec(code, mod.__dict__, scope)  # noqa: S102 - the mutant's own, edited source
        new_fn = scope[function]
        self.patch(module, function, new_fn)
        return new_fn

    def undo(self) -> None:
        """Restore every attribute this plugin patched, newest first."""
        while self._undo:
            mod, attr, old = self._undo.pop()
            if old is _MISSING:
                delattr(mod, attr)
            else:
                setattr(mod, attr, old)


def _load_one(path: Path) -> PluginAPI:
    key = str(path)
    if key in _LOADED:
        return _LOADED[key]
    if not path.is_file():
        raise InvalidArgument(f"plugin {path}: {'not a file' if path.exists() else 'no such file'}")
    digest = hashlib.sha1(key.encode()).hexdigest()[:8]
    modname = f"aliasfuzz_plugin_{path.stem}_{digest}"
    api = PluginAPI(path.stem)
    try:
        # the loader named, not guessed from the suffix: a file without ".py" got no spec,
        # and the error read "'NoneType' object has no attribute 'loader'" (fresh user 52's B8)
        loader = importlib.machinery.SourceFileLoader(modname, str(path))
        spec = importlib.util.spec_from_file_location(modname, path, loader=loader)
        module = importlib.util.module_from_spec(spec)
        sys.modules[modname] = module
        spec.loader.exec_module(module)
        install = getattr(module, "install", None)
        if install is not None:
            install(api)
    except Exception as e:
        api.undo()
        sys.modules.pop(modname, None)
        msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise InvalidArgument(f"plugin {path} failed to load: {type(e).__name__}: {msg}") from e
    _LOADED[key] = api
    return api


def load_plugins(paths: Iterable[str | os.PathLike]) -> list[PluginAPI]:
    """Import each plugin file once per process (a second call is a no-op) and install it.

    Raises :class:`InvalidArgument` (one line) when a file is missing or raises on import
    or in ``install``; the patches of a plugin that failed are undone.
    """
    return [_load_one(Path(p).resolve()) for p in paths]


def activate(paths: Sequence[str | os.PathLike]) -> list[str]:
    """Load ``paths`` here and export them in :data:`ENV` for workers started later.

    Returns the absolute paths. Raises :class:`InvalidArgument` like :func:`load_plugins`.
    """
    absolute = [str(Path(p).resolve()) for p in paths]
    load_plugins(absolute)
    if absolute:
        os.environ[ENV] = os.pathsep.join(absolute)
    else:
        os.environ.pop(ENV, None)
    return absolute


def load_from_env() -> list[PluginAPI]:
    """In a worker: load the plugins named in :data:`ENV` (none when it is unset)."""
    value = os.environ.get(ENV, "")
    return load_plugins([p for p in value.split(os.pathsep) if p])


def unload_all() -> None:
    """Undo every loaded plugin's recorded patches and forget them (for tests)."""
    while _LOADED:
        _, api = _LOADED.popitem()
        api.undo()

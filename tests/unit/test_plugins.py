"""Pass plugins (``aliasfuzz.plugins``): hooks exist, patches are undone, errors are one line."""

from __future__ import annotations

import os

import pytest

from aliasfuzz import plugins
from aliasfuzz.errors import InvalidArgument
from aliasfuzz.passes.hygiene import HookNotFound, resolve
from tests.common.torch_versions import torch_before

RP = "torch._inductor.fx_passes.reinplace"


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    monkeypatch.delenv(plugins.ENV, raising=False)
    yield
    plugins.unload_all()


@pytest.mark.parametrize("module, attr", plugins.HOOKS, ids=[".".join(h) for h in plugins.HOOKS])
def test_every_documented_hook_exists_on_this_torch(module, attr):
    instead = plugins.ABSENT_ON_TORCH_2_11.get((module, attr))
    if instead is not None and torch_before("2.13"):
        # documented as absent on 2.11 (e.g. identify_accessed_tensors arrived with the
        # access analysis): the replacement exists, the hook does not, and patching it is a
        # loud HookNotFound naming the replacement (never a silent no-op)
        assert resolve(module, instead[0]) is not None
        with pytest.raises(HookNotFound, match=f"has {module}.{instead[0]} instead"):
            plugins.PluginAPI("t").patch(module, attr, None)
    else:
        assert resolve(module, attr) is not None


def test_hooks_documented_absent_on_2_11_are_documented_hooks():
    assert set(plugins.ABSENT_ON_TORCH_2_11) <= set(plugins.HOOKS)


def test_patch_and_source_mutant_are_undone(tmp_path):
    core_before = resolve(RP, "reinplace_inplaceable_ops_core")
    overlap_before = resolve(RP, "compute_overlapping_tensors")
    f = tmp_path / "p.py"
    f.write_text(
        "def install(api):\n"
        f"    api.patch({RP!r}, 'compute_overlapping_tensors', lambda ls: set())\n"
        f"    api.mutate_source({RP!r}, 'reinplace_inplaceable_ops_core',\n"
        "        [('def can_inplace(node, mutated_arg):\\n',\n"
        "          'def can_inplace(node, mutated_arg):\\n        return False\\n')])\n"
    )
    plugins.load_plugins([f])
    core = resolve(RP, "reinplace_inplaceable_ops_core")
    assert core is not core_before and "<plugin p:" in core.__code__.co_filename
    assert resolve(RP, "compute_overlapping_tensors")([1, 2]) == set()
    plugins.load_plugins([f])  # a second load is a no-op, not a second patch
    plugins.unload_all()
    assert resolve(RP, "reinplace_inplaceable_ops_core") is core_before
    assert resolve(RP, "compute_overlapping_tensors") is overlap_before


def test_an_edit_that_does_not_match_once_refuses_and_undoes_earlier_patches(tmp_path):
    before = resolve(RP, "compute_overlapping_tensors")
    f = tmp_path / "stale.py"
    f.write_text(
        "def install(api):\n"
        f"    api.patch({RP!r}, 'compute_overlapping_tensors', None)\n"
        f"    api.mutate_source({RP!r}, 'reinplace_inplaceable_ops_core', [('no such text', '')])\n"
    )
    with pytest.raises(InvalidArgument, match="matches 0 times") as e:
        plugins.load_plugins([f])
    assert "\n" not in str(e.value)
    assert resolve(RP, "compute_overlapping_tensors") is before


def test_broken_and_missing_plugins_are_one_line_errors(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("import no_such_module_xyz\n")
    with pytest.raises(InvalidArgument, match="bad.py failed to load: ModuleNotFoundError"):
        plugins.load_plugins([bad])
    with pytest.raises(InvalidArgument, match="no such file"):
        plugins.load_plugins([tmp_path / "absent.py"])
    # fresh user 52's B8: a file without ".py" said "'NoneType' object has no attribute
    # 'loader'"; it loads as Python source, and fails in its own words when it is none
    text = tmp_path / "afile"
    text.write_text("not: python\n")
    with pytest.raises(InvalidArgument, match="afile failed to load: SyntaxError") as e:
        plugins.load_plugins([text])
    assert "NoneType" not in str(e.value)
    side = tmp_path / "side_plugin"
    side.write_text("def install(api):\n    pass\n")
    assert [a.name for a in plugins.load_plugins([side])] == ["side_plugin"]


def test_activate_exports_absolute_paths_for_workers(tmp_path, monkeypatch):
    f = tmp_path / "side.py"
    f.write_text("import os\nLOADED = os.getpid()\n")
    monkeypatch.chdir(tmp_path)
    assert plugins.activate(["side.py"]) == [str(f.resolve())]
    assert os.environ[plugins.ENV] == str(f.resolve())
    assert [a.name for a in plugins.load_from_env()] == ["side"]
    plugins.activate([])
    assert plugins.ENV not in os.environ

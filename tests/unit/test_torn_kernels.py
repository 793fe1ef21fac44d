"""Torn kernel builds in the kernel cache are removed, never judged (fresh user 55's B1)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from aliasfuzz.campaign.torn_kernels import is_torn, remove_named, remove_torn

ROOT = Path(__file__).resolve().parents[2]


def _so(path: Path, data: bytes) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    return path


def test_only_torn_builds_whose_lock_is_free_are_removed(tmp_path):
    from filelock import FileLock

    whole = _so(tmp_path / "ab" / "cabwhole.main.so", b"\x7fELF" + b"\0" * 200)
    empty = _so(tmp_path / "cd" / "ccdempty.main.so", b"")
    short = _so(tmp_path / "cd" / "ccdshort.main.so", b"\x7fELF\0\0")
    busy = _so(tmp_path / "ef" / "cefbusy.main.so", b"")
    (tmp_path / "locks").mkdir()
    with FileLock(str(tmp_path / "locks" / "cefbusy.lock")):  # a build in flight elsewhere
        removed = remove_torn(tmp_path)
    assert removed == [empty, short], removed
    assert whole.exists() and busy.exists() and not is_torn(whole) and is_torn(busy)
    assert remove_torn(tmp_path / "missing") == []


def test_a_crash_names_a_torn_build_inside_the_cache_only(tmp_path):
    cache, outside = tmp_path / "cache", tmp_path / "elsewhere"
    inside = _so(cache / "46" / "c46torn.main.so", b"")
    other = _so(outside / "c77torn.main.so", b"")
    said = (f"ImportError: {inside}: file too short | and {other}: file too short; "
            "RuntimeError: output with shape [0, 1]")
    assert remove_named(said, cache) == [inside.resolve()]
    assert not inside.exists() and other.exists()
    assert remove_named("RuntimeError: something else", cache) == []


def test_a_program_whose_kernel_build_was_torn_is_judged_as_if_whole(tmp_path):
    # one process compiles a program (its kernels land in the cache), the build is then cut
    # to 0 bytes as a kill -9 mid-build leaves it; a fresh worker judging the same program
    # loaded "file too short" and filed a crash
    script = textwrap.dedent("""
        import json, sys
        from aliasfuzz.campaign._judge import evaluate
        from aliasfuzz.fuzz.ir import Program
        p = Program.from_json({
            "schema": 1, "storages": [{"name": "s0", "dtype": "float32", "numel": 6,
                                       "init": "arange", "init_args": {}}],
            "inputs": [{"name": "x0", "storage": "s0", "shape": [2, 3], "stride": [3, 1],
                        "offset": 0}],
            "body": [{"op": "mul.Scalar", "args": ["x0"], "out": ["v0"], "params": {"other": 3.0}},
                     {"op": "add_.Scalar", "args": ["x0"], "out": ["v1"], "params": {"other": 1.0}}],
            "outputs": ["v0"], "meta": {}})
        out = evaluate(p, "inductor", "cpu")
        print(json.dumps({k: out.get(k) for k in ("verdict", "explanation", "torn_kernels_removed")}))
    """)
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path), "PYTHONPATH": str(ROOT)}

    def judged() -> dict:
        r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                           env=env, timeout=600, cwd=ROOT)
        assert r.returncode == 0, r.stderr[-2000:]
        return json.loads(r.stdout.strip().splitlines()[-1])

    first = judged()
    assert first["verdict"] == "ok" and not first["torn_kernels_removed"], first
    # the kernels only: a torn ISA probe (cpu_vec_isa) changes the flags, so the key
    builds = list(tmp_path.rglob("*.main.so"))
    assert builds, list(tmp_path.rglob("*"))
    for so in builds:
        so.write_bytes(b"")
    again = judged()
    assert again["verdict"] == "ok", again
    assert again["torn_kernels_removed"], again

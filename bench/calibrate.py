"""Calibration: detection power on the seeded-fault mutants, throughput and oracle cost.

Three parts, each optional, all writing into ``bench/results.json`` (merged key by key,
so partial runs accumulate) and the generated table of ``bench/README.md``:

* ``mutants``: per mutant of ``bench/mutants``, one campaign ``aliasfuzz run --plugin
  MUTANT --pipelines P --seed S --time B --workers W`` in a subprocess (state and corpus in
  a temporary folder). The journal is watched: the first task whose verdict is one the
  mutant should cause, and whose program does *not* get that verdict without the plugin
  (re-judged here, in this clean process: a real PyTorch bug the campaign also finds is
  not a detection), is the detection; time to detection is counted from the campaign's
  start (worker start-up included). By default the campaign is then stopped (SIGINT, a
  resumable stop) once the finding's minimized entry is written or ``--shrink-wait``
  seconds passed; ``--full`` runs the whole budget. Repro size: the minimized statements
  of every corpus entry written by the mutant campaigns (median).
* ``throughput``: per pipeline, a plugin-free campaign of ``--throughput-programs``
  programs with 1 worker and with all cores: programs/s over the whole campaign and in
  steady state (first to last task, worker start-up excluded).
* ``cost``: per pipeline, the first ``--cost-programs`` programs of the seed, each timed
  three ways in this process: bare ``torch.compile`` with the matching backend (the
  baseline), the harness's pipeline adapter (``run_pipeline``) and the judged run
  (``_judge.evaluate``: pipeline + oracle). Oracle cost = judged − pipeline, per program.

Usage::

    python bench/calibrate.py                                   # everything, 600 s per mutant
    python bench/calibrate.py --parts mutants --mutants m1_view_readers,m7_fx_later_uses --budget 120
    python bench/calibrate.py --parts throughput,cost --throughput-programs 20 --cost-programs 10
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
BENCH = ROOT / "bench"
ZOO = BENCH / "mutants"

#: mutant -> (pipelines its campaign fuzzes, verdicts that count as detecting it).
MUTANTS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "m1_view_readers": (("inductor-reinplace",), ("miscompile", "unsafe-reinplace")),
    "m2_graph_input": (("inductor-reinplace",), ("miscompile", "unsafe-reinplace")),
    "m3_no_overlap": (("inductor-reinplace",), ("miscompile", "unsafe-reinplace")),
    "m4_two_users": (("inductor-reinplace",), ("missed-reinplace",)),
    "m5_always_clone": (("inductor-reinplace",), ("missed-reinplace",)),
    "m6_triton_readonly": (("aot_eager",), ("miscompile", "unsafe-reinplace")),
    "m7_fx_later_uses": (("fx-reinplace",), ("miscompile", "unsafe-reinplace")),
    "m8_ts_profile_left": (("torchscript",), ("invariant",)),
    # only programs with requires_grad leaves see it (fuzz.grads: a share of programs)
    "m9_backward_reinplace": (("inductor-reinplace",), ("miscompile",)),
}
PIPELINES = ("inductor-reinplace", "inductor", "aot_eager", "fx-reinplace")
#: the bare ``torch.compile`` backend each pipeline is compared with.
BARE_BACKEND = {
    "inductor": "inductor",
    "aot_eager": "aot_eager",
    "inductor-reinplace": "aot_eager",
    "fx-reinplace": "aot_eager",
}


def _cli(args: list[str], log: Path) -> subprocess.Popen:
    with open(log, "wb") as f:
        return subprocess.Popen(
            [sys.executable, "-m", "aliasfuzz.cli", *args],
            cwd=ROOT,
            stdout=f,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )


def _journal(state: Path) -> tuple[dict[str, Any] | None, list[dict[str, Any]]]:
    from aliasfuzz.campaign.journal import Journal

    runs = sorted((state / "runs").glob("*"))
    if not runs or not (runs[-1] / "start.json").exists():
        return None, []
    start = json.loads((runs[-1] / "start.json").read_text())
    return start, Journal.events(runs[-1] / "journal.jsonl")


def _stop(proc: subprocess.Popen) -> None:
    """Interrupt a campaign (resumable stop), by force after 60 s."""
    if proc.poll() is not None:
        return
    os.killpg(proc.pid, signal.SIGINT)
    try:
        proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def _baseline_verdict(event: dict[str, Any]) -> str:
    """The verdict of the event's program and pipeline here, without any plugin."""
    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz.ir import Program

    program = Program.from_json(event["program"])
    return _judge.evaluate(program, event["pipeline"], "cpu")["verdict"]


def run_mutant(name: str, a: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """One mutant's campaign; the result row (see the module docstring)."""
    from aliasfuzz.campaign import _judge

    pipelines, targets = MUTANTS[name]
    row: dict[str, Any] = {"pipelines": list(pipelines), "expected": list(targets)}
    missing = [p for p in pipelines if p not in _judge.pipeline_names()]
    if missing == ["torchscript"]:
        return ts_loop(name, a, row)
    if missing:
        row.update(detected=None, note=f"{missing[0]} is not a campaign pipeline yet")
        return row
    state, corpus = tmp / name / "state", tmp / name / "corpus"
    state.mkdir(parents=True)
    corpus.mkdir(parents=True, exist_ok=True)  # run refuses a named corpus that is not there
    args = ["run", "--plugin", str(ZOO / f"{name}.py"), "--pipelines", ",".join(pipelines)]
    args += ["--seed", str(a.seed), "--time", str(a.budget), "--workers", str(a.workers)]
    args += ["--state", str(state), "--corpus", str(corpus), "--report", "none", "-q"]
    args += ["--fail-on", ",".join(targets)]
    row["command"] = "aliasfuzz " + " ".join(args)
    proc = _cli(args, tmp / f"{name}.log")
    seen, hit, hit_at = 0, None, None
    judged: dict[tuple, str] = {}
    while True:
        done = proc.poll() is not None
        start, events = _journal(state)
        for e in events[seen:]:
            if hit is None and e["t"] == "task" and e["outcome"]["verdict"] in targets:
                key = (e["i"], e["pipeline"])
                judged[key] = _baseline_verdict(e)
                if judged[key] != e["outcome"]["verdict"]:
                    hit, hit_at = e, time.monotonic()
                    row.update(
                        detected=True,
                        seconds_to_detection=round(e["ts"] - start["started"], 1),
                        verdict=e["outcome"]["verdict"],
                        check=e["outcome"].get("check"),
                        program_index=e["i"],
                        baseline_verdict=judged[key],
                        explanation=e["outcome"].get("explanation", "")[:200],
                    )
            if hit is not None and e["t"] == "finding" and e.get("i") == hit["i"]:
                row["entry"] = e.get("id")
        seen = len(events)
        if done:
            break
        if hit is not None and not a.full:
            if "entry" in row or time.monotonic() - hit_at > a.shrink_wait:
                _stop(proc)
                continue
        time.sleep(1.0)
    start, events = _journal(state)
    tasks = [e for e in events if e["t"] == "task"]
    row["programs_run"] = len({e["i"] for e in tasks})
    row["campaign_seconds"] = round(events[-1]["ts"] - start["started"], 1) if events else 0.0
    row["false_alarms"] = sorted({v for k, v in judged.items() if v in targets})
    if hit is None:
        row.update(detected=False, verdicts=_counts(tasks))
    sizes = {}
    for meta in corpus.glob("*/meta.json"):
        m = json.loads(meta.read_text())
        sizes[meta.parent.name] = m["statements"]
    row["entries"] = sizes
    if row.get("entry") in sizes:
        row["minimized_statements"] = sizes[row["entry"]]["minimized"]
    if "torchscript" in pipelines and not row["detected"]:
        # Campaigns judge torchscript runs with oracle.judge, which does not apply the
        # TorchScript invariants (oracle.ts_invariants.judge): measure that judge too.
        row["direct_loop"] = ts_loop(
            name, a, {}, "ts_invariants.judge loop in one process (not the campaign's judge)"
        )
    return row


def ts_loop(
    name: str,
    a: argparse.Namespace,
    row: dict[str, Any],
    note: str = "direct loop in one process: torchscript is not a campaign pipeline yet",
) -> dict[str, Any]:
    """The campaign's loop for a TorchScript mutant, in this process, one program at a time
    (``torchscript`` is not a campaign pipeline yet): program ``i`` of the seed through
    :func:`aliasfuzz.passes.torchscript.run_torchscript` and its judge, with the plugin
    loaded; a target verdict is re-judged without it (attribution, as for campaigns)."""
    from aliasfuzz import plugins
    from aliasfuzz.campaign import _judge
    from aliasfuzz.oracle.ts_invariants import judge
    from aliasfuzz.passes.torchscript import run_torchscript

    targets = MUTANTS[name][1]
    row["note"] = note
    counts: dict[str, int] = {}
    t0, i = time.monotonic(), 0
    row["detected"] = False
    while time.monotonic() - t0 < a.budget:
        program = _judge.generate(a.seed, i)
        plugins.load_plugins([ZOO / f"{name}.py"])
        try:
            verdict, why = judge(run_torchscript(program))
        finally:
            plugins.unload_all()
        counts[verdict.value] = counts.get(verdict.value, 0) + 1
        i += 1
        if verdict.value in targets:
            base = judge(run_torchscript(program))[0].value
            if base != verdict.value:
                row.update(
                    detected=True,
                    seconds_to_detection=round(time.monotonic() - t0, 1),
                    verdict=verdict.value,
                    check=why.split(":")[1].strip() if why.count(":") >= 2 else None,
                    program_index=i - 1,
                    baseline_verdict=base,
                    explanation=why[:200],
                    program_statements=len(program.body),  # not shrunk here
                )
                break
    row.update(programs_run=i, campaign_seconds=round(time.monotonic() - t0, 1))
    if not row["detected"]:
        row["verdicts"] = counts
    return row


def _counts(tasks: list[dict[str, Any]]) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in tasks:
        out[e["outcome"]["verdict"]] = out.get(e["outcome"]["verdict"], 0) + 1
    return out


def throughput(pipeline: str, workers: int, a: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """A plugin-free campaign of ``--throughput-programs`` programs; its rates."""
    state = tmp / f"tp-{pipeline}-{workers}" / "state"
    state.mkdir(parents=True)
    (state.parent / "corpus").mkdir(exist_ok=True)  # run refuses a named corpus that is not there
    args = ["run", "--pipelines", pipeline, "--programs", str(a.throughput_programs)]
    args += ["--seed", str(a.seed), "--workers", str(workers), "--no-shrink", "-q"]
    args += ["--state", str(state), "--corpus", str(state.parent / "corpus"), "--report", "none"]
    _cli(args, state.parent / "log").wait()
    start, events = _journal(state)
    ts = [e["ts"] for e in events if e["t"] == "task"]
    total = (ts[-1] - start["started"]) if ts else 0.0
    steady = (ts[-1] - ts[0]) if len(ts) > 1 else 0.0
    return {
        "workers": workers,
        "programs": len(ts),
        "programs_per_s": round(len(ts) / total, 2) if total else None,
        "steady_programs_per_s": round((len(ts) - 1) / steady, 2) if steady else None,
    }


def _median_ms(xs: list[float]) -> float | None:
    return round(1000 * statistics.median(xs), 1) if xs else None


def _cost_step(step: str, pipeline: str, seed: int, n: int) -> dict[str, Any]:
    """Times (s) of one way of running the first ``n`` programs of ``seed`` (in a child)."""
    import torch

    import aliasfuzz.passes.pipelines as pipelines_module
    from aliasfuzz.campaign import _judge
    from aliasfuzz.fuzz.eager import make_inputs
    from aliasfuzz.fuzz.render import load_function
    from aliasfuzz.passes.hygiene import reset_program, setup_process
    from aliasfuzz.passes.pipelines import run_pipeline

    setup_process()  # caches off, as in the pipelines, for the bare baseline too
    failed = 0
    inside: list[float] = []  # judged: time of each run_pipeline call the judge makes

    def timed_run_pipeline(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return run_pipeline(*args, **kwargs)
        finally:
            inside.append(time.perf_counter() - t0)

    # judge() imports run_pipeline from the module at call time: the oracle's own cost is
    # the judged time minus its first pipeline run (confirmation re-runs count as oracle).
    pipelines_module.run_pipeline = timed_run_pipeline

    def run(program) -> bool:
        nonlocal failed
        if step == "pipeline":
            run_pipeline(pipeline, program, make_inputs(program))
        elif step == "judged":
            _judge.evaluate(program, pipeline, "cpu")
        else:
            fn = load_function(program)[0]
            reset_program()
            try:
                torch.compile(fn, backend=BARE_BACKEND[pipeline])(*make_inputs(program))
            except Exception:  # the system under test failing is data, not a baseline time
                failed += 1
                return False
        return True

    for i in range(2):  # warm-up: one-off imports and initializations, not counted
        run(_judge.generate(seed + 1, i))
    times, oracle = [], []
    for i in range(n):
        program = _judge.generate(seed, i)
        inside.clear()
        t0 = time.perf_counter()
        if run(program):
            times.append(time.perf_counter() - t0)
            if step == "judged" and inside:
                oracle.append(times[-1] - inside[0])
    return {"times": times, "failed": failed, "oracle": oracle}


def cost(pipeline: str, a: argparse.Namespace, tmp: Path) -> dict[str, Any]:
    """Bare torch.compile, the adapter and the judged run on the same programs.

    Each of the three runs in its own process with its own empty Inductor cache folder,
    so that none reuses code another compiled (Inductor keeps compiled kernels on disk
    and in memory even with the FX graph cache off). Oracle cost: per program, the judged
    time minus the judge's own first pipeline run (timed inside the same call), median.
    """
    med: dict[str, float | None] = {}
    failed, oracle = 0, None
    for step in ("bare", "pipeline", "judged"):
        env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(tmp / f"cost-{pipeline}-{step}"))
        cmd = [sys.executable, str(Path(__file__)), "--cost-step", step, "--pipelines", pipeline]
        cmd += ["--seed", str(a.seed), "--cost-programs", str(a.cost_programs)]
        out = subprocess.run(cmd, env=env, cwd=ROOT, capture_output=True, text=True, check=True)
        got = json.loads(out.stdout.strip().splitlines()[-1])
        med[step] = _median_ms(got["times"])
        failed += got["failed"] if step == "bare" else 0
        if step == "judged":
            oracle = _median_ms(got["oracle"])
    mb, mp, mj = med["bare"], med["pipeline"], med["judged"]
    return {
        "programs": a.cost_programs,
        "baseline": f"torch.compile(backend={BARE_BACKEND[pipeline]!r})",
        "bare_median_ms": mb,
        "bare_failed": failed,
        "pipeline_median_ms": mp,
        "judged_median_ms": mj,
        "oracle_median_ms": oracle,
        "harness_overhead_x": round(mp / mb, 2) if mb else None,
        "judged_overhead_x": round(mj / mb, 2) if mb else None,
    }


def _versions() -> dict[str, str]:
    from aliasfuzz.campaign.corpus import versions

    return versions()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--parts", default="mutants,throughput,cost")
    ap.add_argument("--mutants", default=",".join(MUTANTS), help="comma list of mutant names")
    ap.add_argument("--budget", type=float, default=600.0, help="seconds per mutant (600)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=2, help="campaign workers per mutant (2)")
    ap.add_argument("--full", action="store_true", help="run each budget to its end")
    ap.add_argument("--shrink-wait", type=float, default=120.0)
    ap.add_argument("--pipelines", default=",".join(PIPELINES), help="throughput/cost")
    ap.add_argument("--throughput-programs", type=int, default=40)
    ap.add_argument("--cost-programs", type=int, default=20)
    ap.add_argument("--out", default=str(BENCH / "results.json"))
    ap.add_argument("--cost-step", choices=("bare", "pipeline", "judged"), help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.cost_step:  # a child of cost(): one JSON line on stdout
        print(json.dumps(_cost_step(a.cost_step, a.pipelines, a.seed, a.cost_programs)))
        return 0
    parts = set(a.parts.split(","))
    out = Path(a.out)
    results = json.loads(out.read_text()) if out.exists() else {}
    cores = os.cpu_count() or 1
    results.setdefault("runs", []).append(
        {
            "argv": sys.argv[1:],
            "date": time.strftime("%Y-%m-%d %H:%M"),
            "cores": cores,
            "versions": _versions(),
        }
    )
    tmp = Path(tempfile.mkdtemp(prefix="aliasfuzz-calibrate-"))
    if "mutants" in parts:
        for name in a.mutants.split(","):
            if name not in MUTANTS:
                ap.error(f"unknown mutant {name!r}")
            row = run_mutant(name, a, tmp)
            row.update(seed=a.seed, budget_s=a.budget, workers=a.workers)
            results.setdefault("mutants", {})[name] = row
            print(
                f"{name}: {json.dumps({k: row.get(k) for k in ('detected', 'seconds_to_detection', 'verdict', 'note')})}",
                flush=True,
            )
            _save(out, results)
        sizes = [
            s["minimized"]
            for r in results["mutants"].values()
            for s in r.get("entries", {}).values()
        ]
        results["repro_size"] = {
            "findings": len(sizes),
            "median_minimized_statements": statistics.median(sizes) if sizes else None,
        }
    for p in a.pipelines.split(","):
        if "throughput" in parts:
            rows = [throughput(p, 1, a, tmp), throughput(p, cores, a, tmp)]
            results.setdefault("throughput", {})[p] = rows
            print(f"throughput {p}: {rows}", flush=True)
        if "cost" in parts and p in BARE_BACKEND:  # no torch.compile twin for torchscript
            results.setdefault("cost", {})[p] = cost(p, a, tmp)
            print(f"cost {p}: {results['cost'][p]}", flush=True)
        _save(out, results)
    if out.resolve() == (BENCH / "results.json").resolve():
        from calibrate_table import write_readme_table  # bench/ is sys.path[0] here

        write_readme_table(results, BENCH / "README.md")
    return 0


def _save(out: Path, results: dict[str, Any]) -> None:
    out.write_text(json.dumps(results, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    sys.exit(main())

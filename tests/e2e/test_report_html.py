"""The campaign report: summary.json content, a self-contained page, and rendering in
headless Chromium (skipped when ``chromium`` is not installed)."""

from __future__ import annotations

import json
import shutil
import subprocess
import time

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign.history import History
from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from aliasfuzz.report import latest_campaign, write_report


def _campaign(tmp_path, cid: str, started: float, with_finding: bool) -> None:
    state, corpus = tmp_path / "state", tmp_path / "corpus"
    d = state / "runs" / cid
    d.mkdir(parents=True)
    opts = CampaignOptions(
        programs=3, pipelines=("inductor", "aot_eager"), corpus=str(corpus), state=str(state)
    )
    (d / "options.json").write_text(json.dumps(opts.to_json()))
    (d / "start.json").write_text(
        json.dumps({"id": cid, "started": started, "known": [], "versions": store.versions()})
    )
    p = Program(
        (StorageSpec("s0", 16),),
        (TensorSpec("x", "s0", (4, 4), (4, 1)),),
        (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),),
        ("v0",),
    )
    dec = [
        {"kind": "auto_functionalized_v2", "reinplaced": True, "truth": "unsafe"},
        {"kind": "auto_functionalized_v2", "reinplaced": False, "truth": "safe"},
    ]
    events = []
    for i in range(3):
        for pl in opts.pipelines:
            bad = with_finding and i == 2 and pl == "inductor"
            rejected = i == 1 and pl == "aot_eager"
            events.append(
                {
                    "t": "task",
                    "i": i,
                    "pipeline": pl,
                    "op_kinds": ["inplace", "view"],
                    "h": "h",
                    "statements": 1,
                    "outcome": {
                        "verdict": "miscompile" if bad else "unsupported" if rejected else "ok",
                        "check": "unsupported" if rejected else None,
                        "explanation": "torchscript-unscriptable-op: the program uses an op "
                        "TorchScript does not support (statement 3: tk.scale_ (triton) is not "
                        "scriptable)"
                        if rejected
                        else "",
                        "seconds": 0.1 * (i + 1),
                        "decisions": dec,
                    },
                }
            )
    findings = []
    if with_finding:
        out = {"verdict": "miscompile", "check": "values"}
        sig = store.signature(p, out, "inductor")
        path, _ = store.write_entry(
            corpus,
            p,
            {
                "signature": sig,
                "expected": {"pipeline": "inductor", **out},
                "explanation": "output 0 differs",
                "diff": "eager: 1.0\ncompiled: 2.0 <b>",
                "statements": {"original": 5, "minimized": 1},
            },
        )
        events.append(
            {
                "t": "finding",
                "i": 2,
                "pipeline": "inductor",
                "id": path.name,
                "new": True,
                "verdict": "miscompile",
                "check": "values",
            }
        )
        findings.append(
            {
                "id": path.name,
                "pipeline": "inductor",
                "verdict": "miscompile",
                "check": "values",
                "new": True,
            }
        )
    events.append({"t": "end", "status": "done"})
    (d / "journal.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    History(state / "history.sqlite").record(
        {
            "id": cid,
            "started": started,
            "finished": started + 9,
            "seed": 0,
            "device": "cpu",
            "pipelines": "inductor,aot_eager",
            "budget": "3 programs",
            "programs": 3,
            "tasks": 6,
            "seconds": 9.0,
            "throughput": 1 / 3,
            "status": "done",
            "versions": {},
        },
        {("inductor", "ok"): 2},
        findings,
    )


@pytest.fixture
def report(tmp_path):
    _campaign(tmp_path, "c1", time.time() - 100, with_finding=False)
    _campaign(tmp_path, "c2", time.time(), with_finding=True)
    assert latest_campaign(tmp_path / "state") == "c2"
    return write_report(
        "c2", state=tmp_path / "state", corpus=tmp_path / "corpus", out=tmp_path / "out"
    )


def test_summary_json_and_self_contained_html(report):
    s = json.loads((report.parent / "summary.json").read_text())
    assert s["verdicts"]["inductor"] == {"ok": 2, "miscompile": 1}
    assert s["confusion"]["inductor"]["unsafe"] == {"reinplaced": 3, "copied": 0}
    assert s["confusion"]["aot_eager"]["safe"] == {"reinplaced": 0, "copied": 3}
    assert s["coverage"]["programs_with_kind"] == {"inplace": 3, "view": 3}
    assert [h["id"] for h in s["history"]] == ["c1", "c2"]
    assert s["rejections"] == {}
    assert s["unsupported"] == {
        "aot_eager": {
            "torchscript-unscriptable-op: the program uses an op TorchScript does not support "
            "[tk.scale_]": 1
        }
    }
    (f,) = s["findings"]
    assert f["verdict"] == "miscompile" and "def program" in f["repro"]
    html = report.read_text()
    assert "http://" not in html and "https://" not in html and "<script" not in html
    assert html.count("data:image/png;base64,") == 3  # coverage, throughput, trends
    assert "&lt;b&gt;" in html  # the diff is escaped
    for section in (
        "Summary",
        "Verdicts per pipeline",
        "Documented refusals",
        "Programs a pipeline rejected",
        "Decisions against ground truth",
        "Findings",
        "Op-kind coverage",
        "Throughput",
        "Trends across campaigns",
    ):
        assert f"<h2>{section}</h2>" in html


def test_renders_in_headless_chromium(report, tmp_path):
    exe = shutil.which("chromium") or shutil.which("chromium-browser")
    if exe is None:
        pytest.skip("chromium is not installed (apt-get install chromium)")
    flags = [
        exe,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--hide-scrollbars",
        f"--user-data-dir={tmp_path / 'profile'}",
    ]
    shot = tmp_path / "shot.png"
    subprocess.run(
        [*flags, f"--screenshot={shot}", "--window-size=1200,1600", report.as_uri()],
        check=True,
        capture_output=True,
        timeout=120,
    )
    dom = subprocess.run(
        [*flags, "--dump-dom", report.as_uri()],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    assert "aliasfuzz campaign c2" in dom and 'id="finding-1"' in dom
    import matplotlib.image

    img = matplotlib.image.imread(shot)
    assert img.shape[0] >= 1000 and img.shape[1] >= 1000
    # not a blank page: many distinct colours, and dark text pixels on the light page
    flat = img[..., :3].reshape(-1, 3)
    assert len({tuple(px) for px in flat[::97].round(2).tolist()}) > 20
    assert (flat.mean(axis=1) < 0.3).mean() > 0.002


def test_unknown_runs_are_listed_by_reason():
    from aliasfuzz.report.data import undecided

    def task(pipeline, verdict, explanation):
        return {"pipeline": pipeline, "outcome": {"verdict": verdict, "explanation": explanation}}

    tasks = [
        task("inductor", "unknown", "triton_kernel_wrapper_functional_proxy_1 (s_ptr) undecided: 4 runs agree"),
        task("inductor", "unknown", "triton_kernel_wrapper_functional_proxy_7 (s_ptr) undecided: 2 runs agree"),
        task("inductor", "ok", ""),
        task("aot_eager", "unknown", "index_put_3 undecided"),
    ]
    assert undecided(tasks) == {
        "aot_eager": {"index_put_N undecided": 1},
        "inductor": {"triton_kernel_wrapper_functional_proxy_N (s_ptr) undecided: N runs agree": 2},
    }

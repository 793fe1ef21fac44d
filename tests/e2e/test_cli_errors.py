"""Every bad input to the ``aliasfuzz`` CLI is one line on stderr and exit code 2, found
before any work: bad flags, bad config files, semantically bad corpus entries (the others
still replay), bad case files. Each command runs in a fresh process, as a user runs it
(:func:`tests.common.cli.run_cli`). Also: a campaign that dies of an internal error is
``failed`` in the history and not picked by ``--resume``."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest

from aliasfuzz.campaign import corpus as store
from aliasfuzz.campaign import driver
from aliasfuzz.campaign.options import DEFAULT_PIPELINES, CampaignOptions
from aliasfuzz.cli import build_parser
from aliasfuzz.fuzz.ir import Op, Program, StorageSpec, TensorSpec
from tests.common.cli import run_cli

#: A child that sees no GPU, whatever the machine has (the replay of a cuda entry and
#: ``--device cuda`` must be refused with one line).
_NO_GPU = {"CUDA_VISIBLE_DEVICES": ""}


@pytest.fixture(autouse=True)
def _debug_pipelines(monkeypatch):
    monkeypatch.setenv("ALIASFUZZ_DEBUG_PIPELINES", "1")


def _one_line_error(argv, *needles, env=None) -> str:
    """Run ``aliasfuzz argv`` in a fresh process; assert exit 2 and a single stderr line
    holding ``needles``."""
    r = run_cli(*argv, env=env)
    err = r.stderr
    lines = err.strip().splitlines()
    assert r.returncode == 2, err
    assert len(lines) == 1 and lines[0].startswith("aliasfuzz: error: "), err
    for n in needles:
        assert n in lines[0], lines[0]
    return lines[0]


def _run(tmp_path, *extra) -> list[str]:
    (tmp_path / "corpus").mkdir(exist_ok=True)  # a named --corpus must exist
    return [
        "run", "--programs", "1", "--pipelines", "debug-miscompile", "-q", "--report", "none",
        "--corpus", str(tmp_path / "corpus"), "--state", str(tmp_path / "state"), *extra,
    ]  # fmt: skip


# -- run: flags ---------------------------------------------------------------------------
@pytest.mark.parametrize(
    "flags, needle",
    [
        (["--time", "nan"], "--time"),
        (["--time", "inf"], "--time"),
        (["--workers", "100000"], "--workers must be between 1 and 512"),
        (["--shrink-budget", "-1"], "--shrink-budget"),
        (["--timeout", "nan"], "--timeout"),
        (["--device", "tpu"], "device"),
        (["--grad-share", "1.5"], "--grad-share must be a share between 0 and 1"),
        (["--grad-share", "nan"], "--grad-share must be a share between 0 and 1"),
        (["--dynamic-share", "-0.5"], "--dynamic-share must be a share between 0 and 1"),
        (["--dynamic-share", "inf"], "--dynamic-share must be a share between 0 and 1"),
        (["--pipelines", "aot_eager,aot_eager"], "--pipelines names 'aot_eager' twice"),
        # fresh user 47's B1: every program a "hang", one shrunk to `return None` and drafted
        (["--pipelines", "aot_eager", "--timeout", "0.05"], "--timeout must be at least 10 seconds"),
        (["--fail-on", ""], "--fail-on is empty"),
        # the flag as typed, not the option's field name (fresh user 34)
        (["--fail-on", ","], "--fail-on has an empty item"),
        (["--pipelines", "aot_eager,,inductor"], "--pipelines has an empty item"),
        # fresh user 40's B4: the generator's bound was said after torch was imported, as
        # "max_statements must be an integer in [0, 256]"
        (["--max-statements", "100000"], "--max-statements must be in [1, 256], got 100000"),
        (["--max-statements", "0"], "--max-statements must be in [1, 256], got 0"),
    ],
)
def test_run_bad_numbers_and_device(tmp_path, flags, needle):
    argv = _run(tmp_path, *flags)
    if "--time" in flags:
        argv.remove("--programs"), argv.remove("1")
    _one_line_error(argv, needle)
    assert not (tmp_path / "state").exists()  # nothing started


def test_run_cuda_without_gpu(tmp_path):
    _one_line_error(_run(tmp_path, "--device", "cuda"), "cuda", "is_available", env=_NO_GPU)


def test_run_corpus_is_a_file_and_report_unwritable(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    argv = _run(tmp_path)
    argv[argv.index("--corpus") + 1] = str(f)
    _one_line_error(argv, "--corpus", "not a directory")
    argv = _run(tmp_path)
    argv[argv.index("--report") + 1] = str(f / "x")
    _one_line_error(argv, "--report", "not a directory")
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize(("name", "text", "needle"), [
    ("meta.json", "{", "not valid JSON"), ("program.json", "[1, 2", "not valid JSON"),
    # fresh user 51's B1: a traceback and exit 1 (a "new finding") for these
    ("meta.json", "<dir>", "cannot be read"), ("program.json", "<loop>", "cannot be read"),
])
def test_run_with_a_corrupt_corpus_entry_fails_before_any_work(tmp_path, name, text, needle):
    # the fourteenth session's fresh user: the campaign ran its programs, then failed when it
    # recorded a finding beside the corrupt entry (the finding kept only for --resume)
    argv = _run(tmp_path)
    corpus = Path(argv[argv.index("--corpus") + 1])
    entry = corpus / "miscompile-x-0000000000"
    entry.mkdir(parents=True)
    (entry / "meta.json").write_text('{"expected": {"pipeline": "aot_eager", "verdict": "ok"}}')
    (entry / "program.json").write_text("{}")
    if text == "<dir>":
        (entry / name).unlink()
        (entry / name).mkdir()
    elif text == "<loop>":
        (entry / name).unlink()
        (entry / name).symlink_to(entry / name)
    else:
        (entry / name).write_text(text)
    _one_line_error(argv, name, needle)
    assert not (tmp_path / "state").exists()


@pytest.mark.parametrize("flag", ["--corpus", "--state", "--report"])
def test_run_folder_that_cannot_be_created_is_a_one_line_error_before_any_work(tmp_path, flag):
    # a fresh user's --corpus /proc/nope ran 42 s, then ended in a FileNotFoundError
    # traceback with exit 1 (the campaign marked failed); os.access says yes to root there
    if not Path("/proc").is_dir():
        pytest.skip("no /proc on this platform")
    argv = _run(tmp_path)
    argv[argv.index(flag) + 1] = "/proc/aliasfuzz-cannot-create"
    # a named corpus must exist: refused before it is tried (a typo, or /proc)
    _one_line_error(argv, flag, "no such directory" if flag == "--corpus" else "cannot create it")
    assert not (tmp_path / "state").exists()


def test_run_named_corpus_that_does_not_exist_is_refused(tmp_path):
    # fresh user 20: a typo in --corpus started a campaign against a new, empty corpus
    argv = _run(tmp_path)
    argv[argv.index("--corpus") + 1] = str(tmp_path / "corpsu")
    _one_line_error(argv, f"--corpus {tmp_path / 'corpsu'}: no such directory")
    assert not (tmp_path / "corpsu").exists() and not (tmp_path / "state").exists()
    # a config file's corpus is named too
    cfg = tmp_path / "c.toml"
    cfg.write_text(f'[run]\ncorpus = "{tmp_path / "corpsu"}"\n')
    argv = _run(tmp_path, "--config", str(cfg))
    i = argv.index("--corpus")
    del argv[i:i + 2]
    _one_line_error(argv, "no such directory")
    assert "named, it must exist" in " ".join(run_cli("run", "-h").stdout.split())


def _corrupt(entry: Path, name: str, text: str) -> None:
    entry.mkdir(parents=True)
    (entry / "meta.json").write_text('{"expected": {"pipeline": "aot_eager", "verdict": "ok"}}')
    (entry / "program.json").write_text("{}")
    (entry / name).write_text(text)


def test_run_names_every_corrupt_entry(tmp_path):
    # fresh user 20: only the first was named, so entries were fixed one run at a time
    argv = _run(tmp_path)
    corpus = Path(argv[argv.index("--corpus") + 1])
    _corrupt(corpus / "miscompile-x-0000000000", "meta.json", "{")
    _corrupt(corpus / "crash-y-1111111111", "program.json", "[1, 2")
    line = _one_line_error(argv, "2 corrupt entries", "crash-y-1111111111",
                           "miscompile-x-0000000000", f"aliasfuzz replay {corpus}")
    assert "not valid JSON" in line
    assert not (tmp_path / "state").exists()


def test_replay_and_report_check_known_toml_as_run_does(tmp_path):
    # fresh user 20: a known.toml that run refused passed replay and report with exit 0
    state = tmp_path / "state"
    res = driver.run_campaign(
        CampaignOptions(programs=1, pipelines=("debug-miscompile",), workers=1, report="none",
                        corpus=str(tmp_path / "corpus"), state=str(state), shrink=False),
        show=False,
    )  # fmt: skip
    assert res.status == "done"
    corpus = tmp_path / "corpus"
    (entry,) = store.list_entries(corpus)
    (corpus / "known.toml").write_text('[[bug]]\nissue = "x#1"\ntitle = "t"\nstage = \n')
    _one_line_error(["replay", str(entry)], "known.toml: not valid TOML")
    _one_line_error(["replay", str(corpus)], "known.toml: not valid TOML")
    _one_line_error(["report", "--state", str(state), "--corpus", str(corpus),
                     "--out", str(tmp_path / "r")], "known.toml: not valid TOML")
    (corpus / "known.toml").write_text("# no known bugs\n")
    r = run_cli("replay", entry)
    assert r.returncode == 0, r.stdout + r.stderr


def test_report_out_unwritable(tmp_path):
    f = tmp_path / "afile"
    f.write_text("x")
    # the campaign id check comes first: give it one in the history
    state = tmp_path / "state"
    res = driver.run_campaign(
        CampaignOptions(
            programs=1, pipelines=("debug-miscompile",), workers=1, report="none",
            corpus=str(tmp_path / "corpus"), state=str(state), shrink=False,
        ),
        show=False,
    )  # fmt: skip
    assert res.status == "done"
    _one_line_error(["report", "--state", str(state), "--out", str(f / "x")], "--out", str(f))
    # a named corpus that is not there: nothing is written over a good report
    good = tmp_path / "good"
    _one_line_error(["report", "--state", str(state), "--corpus", str(tmp_path / "nosuch"),
                     "--out", str(good)], "--corpus", "not a directory")
    assert not good.exists()


def _one_entry_campaign(state: Path, corpus: Path):
    """A finished one-program campaign of debug-miscompile that wrote one entry: (res, entry)."""
    res = driver.run_campaign(
        CampaignOptions(programs=1, pipelines=("debug-miscompile",), workers=1, report="none",
                        corpus=str(corpus), state=str(state), shrink=False),
        show=False,
    )  # fmt: skip
    assert res.status == "done"
    (entry,) = store.list_entries(corpus)
    return res, entry


def test_report_refuses_a_corrupt_or_absent_entry_of_its_campaign(tmp_path):
    # fresh user 21: report with the campaign's new entry's meta.json corrupt said nothing,
    # exit 0, and wrote no issue draft for it; replay and run say why, exit 2
    state, corpus = tmp_path / "state", tmp_path / "corpus"
    res, entry = _one_entry_campaign(state, corpus)
    out = tmp_path / "r"
    argv = ["report", "--state", str(state), "--corpus", str(corpus), "--out", str(out)]
    good = (entry / "meta.json").read_text()
    (entry / "meta.json").write_text('{"id": oops')
    _one_line_error(argv, entry.name, "meta.json", "not valid JSON")
    assert not out.exists()  # nothing written over a good report
    (entry / "meta.json").write_text(good)
    # a corpus that holds none of the campaign's entries: the wrong --corpus
    other = tmp_path / "other"
    other.mkdir()
    argv_other = [*argv[:4], str(other), *argv[5:]]
    _one_line_error(argv_other, f"--corpus {other}", "none of the 1", entry.name)
    assert not out.exists()
    # one of two missing (deleted since): a warning, the report still written
    with (state / "runs" / res.id / "journal.jsonl").open("a") as f:
        f.write(json.dumps({"t": "finding", "id": "miscompile-gone-0000000000"}) + "\n")
    r = run_cli(*argv)
    assert r.returncode == 0, r.stderr
    (line,) = r.stderr.strip().splitlines()
    assert line.startswith("aliasfuzz: warning: ") and "miscompile-gone-0000000000" in line
    assert "1 of the 2" in line and "is not there" in line and "its row says so" in line
    assert (out / "index.html").exists()
    # another corpus holding one of the two while the campaign's own exists: refused, the
    # report kept (fresh user 47's B6: rewritten with rows "deleted since" never there)
    shutil.copytree(entry, other / entry.name)
    kept = (out / "index.html").read_text()
    _one_line_error(argv_other, f"--corpus {other}: lacks 1 of the 2",
                    f"which ran with --corpus {corpus}")
    assert (out / "index.html").read_text() == kept


def test_report_of_a_campaign_whose_every_entry_is_gone_from_its_own_corpus_warns(tmp_path):
    # fresh user 40's B7: the campaign's only entry deleted from the corpus it ran with,
    # report refused it as the wrong corpus ("name the corpus it ran with") and wrote nothing
    state, corpus = tmp_path / "state", tmp_path / "c3"
    res, entry = _one_entry_campaign(state, corpus)
    shutil.rmtree(entry)
    # defaulted to the recorded corpus, and named (spelled relative to another folder)
    for k, named in enumerate(([], ["--corpus", "../c3"])):
        out = tmp_path / f"r{k}"
        r = run_cli("report", "--state", state, *named, "--out", out, cwd=tmp_path / "state")
        assert r.returncode == 0, r.stderr
        (line,) = r.stderr.strip().splitlines()
        assert line.startswith("aliasfuzz: warning: ") and entry.name in line, line
        assert "1 of the 1" in line and "is not there" in line and "its row says so" in line
        (row,) = json.loads((out / "summary.json").read_text())["root_causes"]
        assert row["id"] == entry.name and "error" in row
        # missing, not "unreadable: not a corpus entry folder" (fresh user 41's B3)
        assert "not in the corpus (deleted since" in row["error"], row["error"]
        html = (out / "index.html").read_text()
        assert "corpus entry missing: " in html and "corpus entry unreadable" not in html


def test_report_without_corpus_reads_the_one_the_campaign_ran_with(tmp_path):
    # a fresh user ran with --corpus elsewhere, then `report` looked in ./corpus and refused
    state, corpus = tmp_path / "state", tmp_path / "elsewhere"
    res = driver.run_campaign(
        CampaignOptions(programs=1, pipelines=("debug-miscompile",), workers=1, report="none",
                        corpus=str(corpus), state=str(state), shrink=False),
        show=False,
    )  # fmt: skip
    assert res.status == "done" and store.list_entries(corpus)
    out = tmp_path / "r"
    r = run_cli("report", "--state", state, "--out", out, cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    data = json.loads((out / "summary.json").read_text())
    assert data["root_causes"] and all("error" not in row for row in data["root_causes"])
    # the saved corpus gone: ./corpus as before, refused as holding none of the entries
    corpus.rename(tmp_path / "moved")
    (tmp_path / "corpus").mkdir()
    r = run_cli("report", "--state", state, "--out", tmp_path / "r2", cwd=tmp_path)
    assert r.returncode == 2 and "holds none" in r.stderr, r.stderr


def test_report_without_out_rewrites_the_report_where_the_campaign_s_run_wrote_it(tmp_path):
    # fresh user 41's B2: a campaign run with --report outside the checkout got its report
    # rewritten into the checkout's reports/, the first copy left stale
    state, corpus, reports = tmp_path / "state", tmp_path / "corpus", tmp_path / "elsewhere"
    corpus.mkdir()
    r = run_cli("run", "--programs", "1", "--pipelines", "debug-miscompile", "--workers", "1",
                "--no-shrink", "-q", "--report", reports, "--corpus", corpus, "--state", state,
                env={"ALIASFUZZ_DEBUG_PIPELINES": "1"})
    assert r.returncode in (0, 1), r.stderr
    (written,) = reports.iterdir()
    first = (written / "index.html").stat().st_mtime_ns
    checkout = tmp_path / "checkout"
    checkout.mkdir()
    r = run_cli("report", "--state", state, cwd=checkout)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"report: {written / 'index.html'}", r.stdout
    assert (written / "index.html").stat().st_mtime_ns > first
    assert not (checkout / "reports").exists()


def test_replay_and_run_refuse_a_meta_json_of_the_wrong_shape(tmp_path):
    # fresh user 21: "hits": "oops" replayed as `reproduces` and a campaign ran beside it
    c = tmp_path / "corpus"
    e = _entry(c, hits="oops")
    r = run_cli("replay", e)
    (line,) = r.stderr.strip().splitlines()
    assert r.returncode == 2 and "hits must be a list" in line and str(e / "meta.json") in line
    argv = _run(tmp_path)
    _one_line_error(argv, "1 corrupt entry", e.name, "hits must be a list")
    assert not (tmp_path / "state").exists()


def test_run_refuses_an_entry_whose_pipeline_replay_refuses(tmp_path):
    # fresh user 52's B3: expected.pipeline "nosuch" was a corrupt entry to replay (exit 2)
    # and none to run, which went on writing entries beside it
    c = tmp_path / "corpus"
    e = _entry(c, pipeline="nosuch")
    r = run_cli("replay", e)
    assert r.returncode == 2 and "unknown pipeline 'nosuch'" in r.stderr, r.stderr
    argv = _run(tmp_path)
    _one_line_error(argv, "1 corrupt entry", e.name, "unknown pipeline 'nosuch'")
    assert not (tmp_path / "state").exists()


# -- run: config files --------------------------------------------------------------------
@pytest.mark.parametrize(
    "text, needle",
    [
        ('[run]\nworkers = "four"\n', "workers"),
        ('[run]\ntime = "fast"\n', "time"),
        ("[run]\npipelines = 5\n", "pipelines"),
        ("[run]\npipeline_options = 3\n", "pipeline_options"),
        ("run = 5\n", "'run' must be a table"),
        ("[run]\nshrink = 1\n", "shrink"),
        ('[run]\nkernel_cache = "everywhere"\n', "[run] kernel_cache must be one of shared, worker"),
        ("[run]\nshrink_once = 1\n", "shrink_once"),
        # fresh user 33's B2-B4: a pipeline twice, no verdict to fail on, a table beside [run]
        ('[run]\npipelines = ["aot_eager", "aot_eager"]\n', "[run] pipelines names 'aot_eager' twice"),
        ("[run]\nfail_on = []\n", "fail_on is empty"),
        ("[run]\n[other]\nx = 1\n", "table [other] beside [run] is not read"),
        ("y = 2\n[run]\nseed = 1\n", "key 'y' beside [run] is not read"),
        # fresh user 34's B1-B3: a misspelled pipeline's options, a value of the wrong type,
        # an unknown torchscript option were ignored or failed in every worker, exit 0
        ("[run.pipeline_options.inductr]\ndynamic = true\n", "unknown pipeline 'inductr'"),
        ('[run.pipeline_options.inductor]\ndynamic = "no"\n',
         "pipeline_options.inductor.dynamic must be true or false, not 'no'"),
        ("[run.pipeline_options.torchscript.torchscript]\nbogus_ts_opt = 1\n",
         "unknown torchscript option(s) ['bogus_ts_opt']"),
        ('[run.pipeline_options.torchscript.torchscript]\nfuser = "off"\n',
         "torchscript.torchscript.fuser must be true or false"),
        # fresh user 34's B4: the last spelling won, unchecked
        ("[run]\ngrad-share = 0.5\ngrad_share = 7\n", "'grad-share' and 'grad_share' are one option"),
        ("[run]\nseed = -1\n", "[run] seed must be >= 0, not -1"),
        ("[run]\ntime = 5\nprograms = 3\n", "give one budget"),
        ('[run]\npipelines = "debug-miscompile,,debug-miscompile"\n', "empty item"),
        ("[run]\n[run.pipeline_options.debug-miscompile]\nno_such_key = 1\n", "no_such_key"),
        (
            "[run.pipeline_options.debug-miscompile.inductor_config]\nno_such_entry = 1\n",
            "no_such_entry",
        ),
    ],
)
def test_config_values_of_the_wrong_type(tmp_path, text, needle):
    cfg = tmp_path / "c.toml"
    cfg.write_text(text)
    # no budget or pipeline flags: they would replace the config's values under test
    argv = ["run", "-q", "--state", str(tmp_path / "state"), "--config", str(cfg)]
    _one_line_error(argv, needle)
    assert not (tmp_path / "state").exists()  # not even a 'running' campaign in history


@pytest.mark.parametrize(("text", "needle"), [
    ("[run]\nmutate = 5\n", "[run] mutate must be a share between 0 and 1, not 5"),
    ('mutate = "x"\n', "mutate must be a share between 0 and 1, not 'x'"),
    ("[run]\nworkers = 0\n", "[run] workers must be between 1 and 512, not 0"),
    ("[run]\nmax_statements = 100000\n", "[run] max_statements must be in [1, 256], not 100000"),
    ("[run]\ndynamic-share = nan\n", "[run] dynamic_share must be a share between 0 and 1, not nan"),
    ('[run]\ndevice = "tpu"\n', "[run] device = 'tpu': unknown device 'tpu'"),
    # fresh user 24: an unknown key was named without its file or table
    ("[run]\nworkerz = 2\n", "[run] workerz is not a campaign option"),
    # fresh user 36's B7: a misspelled table was "runn is not a campaign option"
    ("[runn]\nworkers = 2\n", "table [runn] is not read (the options go in [run])"),
])
def test_a_bad_config_value_names_the_file_and_key_not_the_flag(tmp_path, text, needle):
    # fresh user 22: [run] mutate = 5 was refused as "--mutate must be a share ...", a flag
    # they had not given
    cfg = tmp_path / "bad.toml"
    cfg.write_text(text)
    line = _one_line_error(["run", "-q", "--state", str(tmp_path / "state"), "--config",
                            str(cfg)], f"config file {str(cfg)!r}: {needle}")
    assert "--" not in line, line
    assert not (tmp_path / "state").exists()


def test_a_flag_that_replaces_a_config_value_is_named_as_the_flag(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_text("[run]\nmutate = 0.5\n")
    line = _one_line_error(_run(tmp_path, "--config", str(cfg), "--mutate", "2"),
                           "--mutate must be a share between 0 and 1")
    assert "config file" not in line, line


def test_config_not_utf8_or_a_directory(tmp_path):
    cfg = tmp_path / "c.toml"
    cfg.write_bytes(b"\xff\xfe[run]\n")
    _one_line_error(_run(tmp_path, "--config", str(cfg)), "not UTF-8")
    _one_line_error(_run(tmp_path, "--config", str(tmp_path)), "is a directory")


def test_help_names_the_real_default_pipelines():
    sub = next(a for a in build_parser()._actions if a.dest == "command")
    helps = {a.dest: a.help for a in sub.choices["run"]._actions}
    assert ",".join(DEFAULT_PIPELINES) in helps["pipelines"]
    assert "torchscript" in helps["pipelines"]


# -- a campaign that dies is 'failed', and --resume does not pick it ----------------------
class _DeadPool:
    def __init__(self, opts, root, bugs=()):
        self.results = self
        self.gpus: list[str] = []  # a CPU campaign's (Pool.gpus)

    def submit(self, prio, job):
        pass

    def get(self, timeout):
        raise RuntimeError("internal bug in the pool")

    def close(self):
        pass

    def abandon(self):  # a failing campaign's pool is abandoned, as an interrupted one's
        pass


def test_internal_error_marks_campaign_failed_not_resumable(tmp_path, monkeypatch):
    monkeypatch.setattr(driver, "Pool", _DeadPool)
    opts = CampaignOptions(
        programs=2, pipelines=("debug-miscompile",), workers=1, report="none",
        corpus=str(tmp_path / "corpus"), state=str(tmp_path / "state"),
    )  # fmt: skip
    with pytest.raises(RuntimeError, match="internal bug"):
        driver.run_campaign(opts, show=False)
    with sqlite3.connect(tmp_path / "state" / "history.sqlite") as db:
        (status,) = db.execute("SELECT status FROM campaigns").fetchone()
    assert status == "failed"
    assert driver.latest_unfinished(tmp_path / "state") is None
    # a fresh user's `run --resume` said only "no unfinished campaign": it names the failed one
    (failed,) = (tmp_path / "state" / "runs").iterdir()
    assert driver.latest_failed(tmp_path / "state") == failed
    _one_line_error(["run", "--resume", "--state", str(tmp_path / "state")],
                    f"--resume {failed}")


# -- replay: entries that are valid JSON but cannot run ----------------------------------
def _entry(corpus: Path, **meta_extra) -> Path:
    body = (Op("add_.Scalar", ("x",), {"other": 1.0}, ("v0",)),)
    p = Program((StorageSpec("s0", 16),), (TensorSpec("x", "s0", (4, 4), (4, 1)),), body, ("v0",))
    out = {"verdict": "miscompile", "check": "values"}
    meta = {
        "root": store.roots(p, out, "debug-miscompile", None)[0],
        "expected": {"pipeline": "debug-miscompile", "verdict": "miscompile", "check": "values"},
    }
    path = store.write_entry(corpus, p, meta)[0]
    m = json.loads((path / "meta.json").read_text())
    for k, v in meta_extra.items():
        if k == "pipeline":
            m["expected"]["pipeline"] = v
        else:
            m[k] = v
    new = corpus / f"{len(store.list_entries(corpus)):02d}-{'-'.join(meta_extra) or 'good'}"
    m["id"] = new.name  # an entry's id names its folder (a mismatch is corrupt of its own)
    (path / "meta.json").write_text(json.dumps(m))
    path.rename(new)
    return new


def test_replay_reports_semantically_bad_entries_as_corrupt_and_goes_on(tmp_path):
    c = tmp_path / "corpus"
    good = _entry(c)
    bad = {
        _entry(c, pipeline="nope").name: "unknown pipeline 'nope'",
        _entry(c, pipeline_options={"no_such_key": 1}).name: "no_such_key",
        _entry(c, pipeline_options=3).name: "pipeline_options must be",
        _entry(c, pipeline_options={"inductor_config": {"no_such_entry": 1}}).name: "no_such",
        _entry(c, device="cuda").name: "cuda",
    }
    r = run_cli("replay", c, env=_NO_GPU)
    out, err = r.stdout, r.stderr
    assert r.returncode == 2, out + err
    assert f"{good.name}" in out and "1 reproduces" in out and "5 corrupt" in out
    for name, why in bad.items():
        (line,) = [x for x in err.splitlines() if f"{name}/meta.json" in x]
        assert why in line, line
    assert "Traceback" not in err


def test_program_json_error_names_the_path_once(tmp_path):
    c = tmp_path / "corpus"
    e = _entry(c)
    (e / "program.json").write_text("{")
    r = run_cli("replay", c)
    assert r.returncode == 2
    err = r.stderr
    assert err.count("program.json") == 1 and "not valid JSON" in err


def test_replay_of_a_folder_without_entries_is_an_error(tmp_path):
    # the fresh user's mistyped path passed as an empty corpus (exit 0)
    (tmp_path / "junk.txt").write_text("x")
    _one_line_error(["replay", str(tmp_path)], "no corpus entries (an entry is a folder holding a meta.json or a program.json)")


def test_replay_of_an_entry_with_an_oversize_storage_is_a_corrupt_entry(tmp_path):
    # fresh user 47's B8: 10**11 elements passed, and replay died allocating them (exit 1,
    # a 47-line traceback)
    import shutil

    entry = tmp_path / "miscompile-reinplace-c6a588ca6c"
    shutil.copytree(Path(__file__).resolve().parents[2] / "corpus" / entry.name, entry)
    program = json.loads((entry / "program.json").read_text())
    program["storages"][0]["numel"] = 10**11
    (entry / "program.json").write_text(json.dumps(program))
    r = run_cli("replay", str(tmp_path))
    err = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(err) == 1, r.stderr
    assert "more than the 1073741824 a program's storage may hold" in err[0]


@pytest.mark.parametrize("t", ["0", "-1", "nan", "1", "9.5"])
def test_replay_timeout_must_be_positive(tmp_path, t):
    # under 10 s (run's floor): fresh user 49's B6, a good entry "changed ... timeout"
    _one_line_error(["replay", str(tmp_path), "--timeout", t], "--timeout must be a finite number of at least 10")


# -- check: the user's case file is the user's code --------------------------------------
_HEADER = '"""A case.\n\nexpect:\n    aot_eager: ok\ndevice: cpu\n"""\nimport torch\n'
_OK = "def program(x):\n    return x + 1\ndef inputs():\n    return (torch.ones(2),)\n"


@pytest.mark.parametrize(
    "body, needles",
    [
        ('raise ValueError("boom at import")\n' + _OK, ("importing it", "ValueError", "boom")),
        (
            "def program(x):\n    return x\ndef inputs():\n    raise RuntimeError('bad')\n",
            ("inputs()", "RuntimeError", "bad"),
        ),
        ("import sys\nsys.exit(3)\n", ("SystemExit", "3")),
        # fresh user 49's B7: nothing printed, exit 0, as if judged
        ("import os\nos._exit(0)\n", ("the case called os._exit(0)",)),
    ],
)
def test_check_case_raising_is_one_line_exit_2(tmp_path, body, needles):
    f = tmp_path / "case_raises.py"
    f.write_text(_HEADER + body)
    _one_line_error(["check", str(f)], str(f), *needles)


def test_check_bad_files_name_the_file(tmp_path):
    syn = tmp_path / "syn.py"
    syn.write_text("def program(:\n")
    _one_line_error(["check", str(syn)], str(syn), "not valid Python")
    noexp = tmp_path / "noexp.py"
    noexp.write_text("import torch\n" + _OK)
    _one_line_error(["check", str(noexp)], str(noexp), "no 'expect:' block")
    _one_line_error(["check", str(tmp_path)], str(tmp_path), "is a directory")
    _one_line_error(["check", str(tmp_path / "gone.py")], "no such case file")


@pytest.mark.parametrize("header", [_HEADER, "import torch\n"], ids=["expect", "no-expect"])
def test_check_names_an_unknown_pipeline_first(tmp_path, header):
    # a fresh user's B4: the case file's "no 'expect:' block" was all that was said
    f = tmp_path / "case.py"
    f.write_text(header + _OK)
    line = _one_line_error(["check", str(f), "--pipelines", "aot_eager,nosuch"],
                           "unknown pipeline 'nosuch' (known: aot_eager, eager, ")
    assert str(f) not in line, line


def test_check_good_case_still_judged(tmp_path):
    f = tmp_path / "good_case.py"
    f.write_text(_HEADER + _OK)
    r = run_cli("check", f)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "aot_eager: ok (as expected)" in r.stdout


def test_a_malformed_known_table_fails_before_a_campaign_folder_exists(tmp_path):
    # fresh user: a bad known.toml left runs/<id>/ with an empty journal and a lock, which
    # the next --resume then picked up
    corpus, state = tmp_path / "c", tmp_path / "s"
    corpus.mkdir()
    (corpus / "known.toml").write_text('[[bug]]\nissue = "x#1"\ntitle = "t"\nstage = "aot"\n'
                                       "control = 3\n")
    _one_line_error(["run", "--programs", "1", "--corpus", str(corpus), "--state", str(state),
                     "--report", "none", "-q"], "control must be a table")
    assert not (state / "runs").exists() or not any((state / "runs").iterdir())


@pytest.mark.parametrize(("control", "needle"), [
    ("{ functorch_config = { view_replay_for_aliased_output = false } }",
     "control: functorch_config has no option 'view_replay_for_aliased_output'"),
    ('{ functorch_config = { view_replay_for_aliased_outputs = "no" } }',
     "functorch_config.view_replay_for_aliased_outputs must be like True, not 'no'"),
    ("{ inductor_config = { cpp.simdlenn = 1 } }", "inductor_config has no option 'cpp.simdlenn'"),
    ('{ dynamic = "yes" }', "control: dynamic must be true or false, not 'yes'"),
    ("{ torchscript = { profiling = false } }", "torchscript has no option 'profiling'"),
])
def test_a_control_naming_an_option_torch_lacks_fails_before_any_work(tmp_path, control, needle):
    # fresh user 36's B1: a misspelled workaround option failed every control run inside the
    # worker, and #198095's crash was filed as a new root cause
    corpus, state = tmp_path / "c", tmp_path / "s"
    corpus.mkdir()
    (corpus / "known.toml").write_text('[[bug]]\nissue = "x#1"\ntitle = "t"\nstage = "aot"\n'
                                       f"control = {control}\n")
    _one_line_error(["run", "--programs", "1", "--corpus", str(corpus), "--state", str(state),
                     "--report", "none", "-q"], needle)
    assert not (state / "runs").exists() or not any((state / "runs").iterdir())


def test_resume_of_a_folder_that_is_no_campaign_names_that_folder(tmp_path):
    _one_line_error(["run", "--resume", str(tmp_path / "nowhere")],
                    f"{tmp_path / 'nowhere'}: not a resumable campaign directory")


def test_resume_of_a_done_campaign_is_refused_and_leaves_it_as_it_was(tmp_path):
    # fresh user 31's B1: it ran nothing, but appended an end event and rewrote the elapsed
    # time (and so the history's throughput)
    d = tmp_path / "state" / "runs" / "20260101-000000-s0"
    d.mkdir(parents=True)
    (d / "options.json").write_text("{}")
    journal = '{"t": "start"}\n{"t": "end", "status": "done", "flaky": 0, "unreproduced": 0}\n'
    (d / "journal.jsonl").write_text(journal)
    (d / "elapsed").write_text("130.7")
    _one_line_error(["run", "--resume", str(d)],
                    f"{d}: that campaign is done, nothing to resume (start a new one; its "
                    "findings are in the corpus already)")
    assert (d / "journal.jsonl").read_text() == journal
    assert (d / "elapsed").read_text() == "130.7"


def test_resume_of_a_broken_or_poisoned_campaign_is_one_line(tmp_path):
    state = tmp_path / "state"
    d = state / "runs" / "20260101-000000-s0"
    d.mkdir(parents=True)
    (d / "options.json").write_text("{")
    (d / "start.json").write_text("{}")
    # the damaged file named (fresh user 47's B15)
    _one_line_error(["run", "--resume", str(d)], "not a resumable campaign directory (options.json: ")
    # options.json saved by an older aliasfuzz without up-front checks
    bad = CampaignOptions(programs=1, pipelines=("debug-miscompile",)).to_json()
    bad["pipeline_options"] = 3
    (d / "options.json").write_text(json.dumps(bad))
    _one_line_error(["run", "--resume", "--state", str(state)], "pipeline_options")


def test_a_journal_line_damaged_in_the_middle_is_one_line_and_leaves_the_state(tmp_path):
    # fresh user 45's B2: a 29-line JSONDecodeError traceback and exit 1 (a torn last line is
    # tolerated: a kill -9 leaves one)
    state = tmp_path / "state"
    d = state / "runs" / "20260101-000000-s0"
    d.mkdir(parents=True)
    (d / "options.json").write_text(json.dumps(
        CampaignOptions(programs=1, pipelines=("debug-miscompile",)).to_json()))
    (d / "start.json").write_text("{}")
    journal = '{"t": "start"}\n{garbage\n{"t": "task", "i": 0}\n'
    (d / "journal.jsonl").write_text(journal)
    # where in the line (fresh user 49's B8: "(Unterminated string starting at)")
    needle = (f"{d / 'journal.jsonl'}:2: not a JSON journal event (Expecting property name "
              "enclosed in double quotes at column 2)")
    _one_line_error(["run", "--resume", str(d)], needle)
    assert (d / "journal.jsonl").read_text() == journal
    # fresh user 55's B6: "(Unterminated string starting at at column 12)"
    (d / "journal.jsonl").write_text('{"t": "start"}\n{"t": "ta\n{"t": "task", "i": 0}\n')
    _one_line_error(["run", "--resume", str(d)], "(Unterminated string starting at column 7)")


def _main_without_torch(argv: list[str], cwd):
    """``aliasfuzz argv`` in a fresh process; its stderr, after asserting exit 2 with torch
    never imported."""
    import subprocess
    import sys

    code = ("import sys\nfrom aliasfuzz.cli import main\n"
            f"rc = main({argv!r})\n"
            "print(rc, 'torch' in sys.modules)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       cwd=cwd, timeout=120)
    assert r.stdout.split() == ["2", "False"], (r.stdout, r.stderr)
    return r.stderr


@pytest.mark.parametrize("flag", [["--programs", "-3"], ["--workers", "0"], ["--timeout", "0"],
                                  ["--pipelines", "inductor,bogus"],
                                  ["--max-statements", "100000"]])
def test_a_bad_run_value_fails_before_torch_is_imported(flag, tmp_path):
    # a fresh user waited seconds for "--programs must be >= 1": torch was imported first
    err = _main_without_torch(["run", *flag], tmp_path)
    assert err.startswith("aliasfuzz: error: "), err


def test_the_built_in_pipeline_names_are_the_adapters():
    from aliasfuzz.campaign.options import BUILTIN_PIPELINES
    from aliasfuzz.passes.pipelines import PIPELINES

    assert sorted(BUILTIN_PIPELINES) == sorted(PIPELINES)


@pytest.mark.parametrize(("argv", "needle"), [
    (["sample", "-n", "-1"], "-n must be an integer >= 0, got -1"),
    (["sample", "--max-statements", "0"], "--max-statements must be in [1, 256], got 0"),
    (["sample", "--max-statements", "100000"], "--max-statements must be in [1, 256], got 100000"),
])
def test_a_bad_sample_flag_names_the_flag(argv, needle):
    _one_line_error(argv, needle)


def test_a_meta_whose_expected_is_not_an_object_says_so(tmp_path):
    entry = tmp_path / "e"
    entry.mkdir()
    (entry / "meta.json").write_text('{"expected": 42}')
    (entry / "program.json").write_text("{}")
    _one_line_error(["replay", str(entry)], "'expected' must be an object")


@pytest.mark.parametrize(("argv", "needle"), [
    (["replay", "nowhere"], "nowhere: no such corpus entry or corpus folder"),
    # fresh user 33: an entry's file was "no such corpus entry" (the test makes it)
    (["replay", "corpus/e/meta.json"], "corpus/e/meta.json: is a file, not a folder; give the "
                                       "entry's folder (corpus/e)"),
    (["check", "nowhere.py"], "nowhere.py: no such case file"),
    # the pipeline is wrong whatever the file: said first (a fresh user's B4)
    (["check", "nowhere.py", "--pipelines", "aot_eager,nosuch"],
     "unknown pipeline 'nosuch' (known: aot_eager, eager, fx-reinplace, inductor, "
     "inductor-noreinplace, inductor-reinplace, torchscript)"),
    (["check", "nowhere.py", "--pipelines", "aot_eager,"],
     "--pipelines has an empty item: 'aot_eager,'"),
])
def test_a_missing_path_fails_before_torch_is_imported(argv, needle, tmp_path):
    (tmp_path / "corpus" / "e").mkdir(parents=True)
    (tmp_path / "corpus" / "e" / "meta.json").write_text("{}")
    # fresh users waited 7-38 s for these one-line errors: torch was imported first
    err = _main_without_torch(argv, tmp_path)
    assert err.strip() == f"aliasfuzz: error: {needle}", err


def test_report_takes_run_s_name_for_its_output_folder():
    # fresh user 22: `report --report DIR` was refused; run calls the folder --report
    parse = build_parser().parse_args
    assert parse(["report", "--report", "x"]).out == parse(["report", "--out", "x"]).out == "x"


def test_a_second_config_file_is_an_error_not_ignored(tmp_path):
    # fresh user 34's B9: --config A --config B read B alone, A's error unseen
    a, b = tmp_path / "a.toml", tmp_path / "b.toml"
    a.write_text("[run]\nworkers = \"four\"\n")
    b.write_text("[run]\nprograms = 1\n")
    argv = ["run", "-q", "--state", str(tmp_path / "state"), "--config", str(a), "--config", str(b)]
    _one_line_error(argv, f"--config given 2 times ({a}, {b}): give one file")
    assert not (tmp_path / "state").exists()


def test_a_missing_plugin_is_refused_with_the_options_and_names_its_config_key(tmp_path):
    # fresh user 39's B13: 22 s (torch imported, the corpus read) before the error, and the
    # config form did not name the file and key
    argv = ["run", "--plugin", str(tmp_path / "nope.py"), "--programs", "1", "--state",
            str(tmp_path / "st"), "--corpus", str(tmp_path / "c"), "--report", "none"]
    _one_line_error(argv, f"plugin {tmp_path / 'nope.py'}: no such file")
    cfg = tmp_path / "p.toml"
    cfg.write_text(f'[run]\nplugins = ["{tmp_path / "nope.py"}"]\n')
    _one_line_error(["run", "--config", str(cfg), *argv[3:]],
                    "[run] plugins = [", f"plugin {tmp_path / 'nope.py'}: no such file")
    assert not (tmp_path / "st").exists()
    # refused by the options' own check, which runs before torch is imported
    from aliasfuzz.campaign.options import CampaignOptions
    from aliasfuzz.errors import InvalidArgument

    with pytest.raises(InvalidArgument, match="no such file"):
        CampaignOptions(programs=1, plugins=(str(tmp_path / "nope.py"),)).validate()
    # a folder is named as one (fresh user 40's B5)
    with pytest.raises(InvalidArgument, match=f"plugin {tmp_path}: not a file"):
        CampaignOptions(programs=1, plugins=(str(tmp_path),)).validate()


def test_a_process_mixed_from_two_trees_gets_the_error_alone_not_the_venv_advice(tmp_path):
    # fresh user 45's B6: PYTHONPATH=<other clone> with this clone's venv printed "run this
    # checkout's own venv" (already the case) before the error that names both trees
    root = Path(__file__).resolve().parents[2]
    other = tmp_path / "other"
    shutil.copytree(root / "aliasfuzz", other / "aliasfuzz",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (other / "pyproject.toml").write_text('[project]\nname = "aliasfuzz"\n')
    import os
    import subprocess
    import sys

    # the console script, as the user ran it: `python -m` would put the working directory
    # (this checkout) before PYTHONPATH
    script = Path(sys.executable).parent / "aliasfuzz"
    if not script.exists():
        pytest.skip("no aliasfuzz console script beside this interpreter")
    r = subprocess.run([str(script), "run", "--programs", "1", "--pipelines", "eager",
                        "--report", "none", "--state", str(tmp_path / "st")], cwd=root,
                       env={**os.environ, "PYTHONPATH": str(other)}, capture_output=True,
                       text=True, timeout=300)
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2, r.stderr
    assert len(lines) == 1 and "more than one source tree" in lines[0], r.stderr


def test_report_names_a_state_that_is_a_file(tmp_path):
    # fresh user 49's B13: "no campaign in FILE/history.sqlite"
    f = tmp_path / "state"
    f.write_text("")
    _one_line_error(["report", "--state", str(f)], f"--state {f}: not a directory")

"""Every value of a ``--config`` file is checked, also one a flag replaces: the README
promises that "a bad value there is named by file and key", and a fresh user's
``seed = -4`` with ``--seed 1`` (and ``time = "abc"`` with ``--programs 1``) ran a campaign,
exit 0, the file still wrong for the next run without that flag.

The options are merged and validated as ``aliasfuzz run`` does it (:func:`_options`),
without a campaign; one test runs the CLI on a command that fails before any work.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from aliasfuzz.campaign.options import merge_options
from aliasfuzz.errors import InvalidArgument
from tests.common.cli import run_cli


def _config(tmp_path: Path, text: str) -> str:
    path = tmp_path / "c.toml"
    path.write_text(text)
    return str(path)


def _options(flags: dict, config: str):
    """The options of ``aliasfuzz run`` with ``flags`` and ``--config config``, validated as
    ``run`` validates them: first without torch, then against the pipelines torch has."""
    from aliasfuzz.campaign import _judge

    return merge_options(flags, config).validate().validate(_judge.pipeline_names())


@pytest.mark.parametrize(("text", "flags", "said"), [
    # the fresh user's two reproductions
    ("[run]\nseed = -4\n", {"seed": 1}, "[run] seed must be >= 0, not -4"),
    ('[run]\ntime = "abc"\n', {"programs": 1},
     "[run] time must be a number of seconds, not 'abc'"),
    # a budget flag replaces the file's other budget: that one is checked too
    ("[run]\nprograms = 0\n", {"time": 3.0}, "[run] programs must be >= 1, not 0"),
    ("[run]\ntime = -1\n", {"programs": 2}, "[run] time must be a finite number > 0 of seconds"),
    ("[run]\nworkers = 0\n", {"workers": 2}, "[run] workers must be between 1 and 512, not 0"),
    ("[run]\nmutate = 5\n", {"mutate": 0.5}, "[run] mutate must be a share between 0 and 1, not 5"),
    ('[run]\nkernel_cache = "x"\n', {"kernel_cache": "worker"},
     "[run] kernel_cache must be one of shared, worker"),
    ('[run]\nfail_on = "ok"\n', {"fail_on": "crash"},
     "[run] fail_on 'ok' is not a finding verdict"),
    ('[run]\npipelines = "aot_eager,bogus"\n', {"pipelines": "eager"},
     "[run] pipelines = ['aot_eager', 'bogus']: unknown pipeline 'bogus'"),
    ('[run]\npipelines = "aot_eager,,eager"\n', {"pipelines": "eager"},
     "[run] pipelines has an empty item"),
    ('[run]\ndevice = "tpu"\n', {"device": "cpu"}, "[run] device = 'tpu': unknown device 'tpu'"),
    ("[run]\nplugins = 5\n", {"plugins": ("p.py",)},
     "[run] plugins must be a comma list or a list of strings, not 5"),
    ("seed = -4\n", {"seed": 1}, "seed must be >= 0, not -4"),  # no [run] table
])
def test_a_bad_config_value_is_refused_though_a_flag_replaces_it(tmp_path, text, flags, said):
    path = _config(tmp_path, text)
    with pytest.raises(InvalidArgument) as e:
        _options(flags, path)
    assert str(e.value).startswith(f"config file {path!r}: {said}"), str(e.value)
    assert "\n" not in str(e.value)


def test_the_flag_still_wins_over_a_good_config_value(tmp_path):
    o = _options({"seed": 4, "programs": 2}, _config(tmp_path, "[run]\nseed = 3\ntime = 5\n"))
    assert (o.seed, o.programs, o.time) == (4, 2, None)


def test_a_bad_flag_is_named_as_the_flag_before_the_files_replaced_value(tmp_path):
    with pytest.raises(InvalidArgument, match=r"^--workers must be between 1 and 512$"):
        _options({"workers": 0}, _config(tmp_path, "[run]\nworkers = -3\n"))


def test_a_replaced_value_is_not_checked_against_this_host(tmp_path):
    # what this host lacks is the used value's business: a shared file's device = "cuda"
    # on a CPU box run with --device cpu, a corpus path that is a file here
    afile = tmp_path / "a-file"
    afile.write_text("")
    text = f'[run]\ndevice = "cuda"\ncorpus = "{afile}"\n'
    o = _options({"device": "cpu", "corpus": str(tmp_path)}, _config(tmp_path, text))
    assert (o.device, o.corpus) == ("cpu", str(tmp_path))


def test_run_refuses_the_file_though_the_flag_replaces_its_value(tmp_path):
    cfg = tmp_path / "c7.toml"
    cfg.write_text("[run]\nseed = -4\n")
    # the missing --corpus is refused right after the options are checked: were the file's
    # seed let through, the error would name the corpus and no campaign would start
    r = run_cli("run", "--config", cfg, "--seed", "1", "--time", "3", "--pipelines", "eager",
                "--corpus", tmp_path / "no-corpus", "--state", tmp_path / "state", "--report",
                "none", "-q", cwd=tmp_path, timeout=120)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stderr.strip().splitlines() == [
        f"aliasfuzz: error: config file {str(cfg)!r}: [run] seed must be >= 0, not -4"]
    assert not (tmp_path / "state").exists()

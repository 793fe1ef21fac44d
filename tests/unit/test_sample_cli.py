"""``aliasfuzz sample``: what it prints about each program."""

import re

import pytest

from aliasfuzz.campaign.options import CampaignOptions
from aliasfuzz.campaign.sources import Programs
from aliasfuzz.cli import main


def test_sample_marks_the_programs_a_default_campaign_compiles_with_dynamic_shapes(capsys):
    n, seed = 40, 1
    assert main(["sample", "-n", str(n), "--seed", str(seed)]) == 0
    headers = re.findall(r"^# --- program (\d+) \(seed 1(; [^)]*)?\) ---$", capsys.readouterr().out,
                         re.M)
    assert len(headers) == n
    marked = {int(i) for i, dyn in headers if "dynamic=True" in dyn}
    campaign = Programs(seed, 8, dynamic_share=CampaignOptions.dynamic_share)
    assert marked == {i for i in range(n) if campaign[i].meta.get("dynamic")}
    assert marked  # seed 1's first 40 hold some at the default share of 0.1


def test_a_family_share_flag_reaches_the_generator(capsys):
    # every program given an Optional[Tensor] input at --optional-share 1, none at 0
    assert main(["sample", "-n", "6", "--seed", "3", "--optional-share", "1"]) == 0
    every = capsys.readouterr().out
    assert main(["sample", "-n", "6", "--seed", "3", "--optional-share", "0"]) == 0
    none = capsys.readouterr().out
    assert every.count("Optional[") >= 6 and "Optional[" not in none


@pytest.mark.parametrize("value", ["1.5", "-1", "nan"])
def test_a_bad_share_is_a_one_line_error_in_the_flag_s_name(capsys, value):
    assert main(["sample", "--autograd-share", value]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--autograd-share must be a number in [0, 1]" in err


def test_sample_takes_run_s_seed_forms(capsys, monkeypatch):
    # fresh user 22: run --seed today worked, sample --seed today was refused; both go
    # through one parser, so sample shows the programs of tonight's campaign
    import time

    monkeypatch.setattr(time, "strftime", lambda fmt, *a: "20261203" if fmt == "%Y%m%d" else fmt)
    assert main(["sample", "-n", "2", "--seed", "today"]) == 0
    today = capsys.readouterr().out
    assert main(["sample", "-n", "2", "--seed", "20261203"]) == 0
    assert today == capsys.readouterr().out and "(seed 20261203" in today


@pytest.mark.parametrize("value", ["abc", "-1", "1.5"])
def test_a_bad_sample_seed_is_refused_as_run_refuses_it(capsys, value):
    with pytest.raises(SystemExit) as e:
        main(["sample", "--seed", value])
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert f"invalid seed '{value}' (an integer >= 0 or 'today')" in err


@pytest.mark.parametrize("cap", [1, 8])
def test_max_statements_caps_the_main_draw_and_each_family_adds_one_at_most(cap):
    # fresh user 41's B1: the help called it a cap, and programs went past it by up to 3
    from aliasfuzz.fuzz.sample import generate_one

    over = [len(generate_one(1, i, max_statements=cap).body) - cap for i in range(150)]
    assert max(over) <= 4  # advanced indexing, metadata, optional input, autograd
    assert max(over) > 0  # what the help now says: the families add to the main draw
    off = {f"{f}_share": 0.0 for f in ("advindex", "metadata", "optional", "autograd")}
    assert all(len(generate_one(1, i, max_statements=cap, **off).body) <= cap for i in range(150))


@pytest.mark.parametrize("argv", [["--nope"], ["--nope", "run"], ["-x"]])
def test_a_flag_before_the_command_is_named(capsys, argv):
    # fresh user 51's B6: `aliasfuzz --nope` said "the following arguments are required:
    # command", not which flag was wrong
    with pytest.raises(SystemExit) as e:
        main(argv)
    err = capsys.readouterr().err
    assert e.value.code == 2 and err.count("\n") == 1, err
    assert f"unrecognized arguments: {argv[0]} (a command comes first: sample, run," in err, err
    with pytest.raises(SystemExit) as e:  # no command at all keeps argparse's words
        main([])
    assert e.value.code == 2 and "required: command" in capsys.readouterr().err

"""bench/breadth_ab_pool.py reads the blocks h200.sh writes and pools them as h200.sh does."""

from __future__ import annotations

from bench.breadth_ab_pool import blocks, interval, main, pooled

TWO_SEEDS = """\
round 0 with     judged 0.500 programs/s, generated 200 programs/s
round 0 without  judged 1.000 programs/s, generated 300 programs/s
ratio with/without: judged 0.500, generated 0.667
round 0 with     judged 0.900 programs/s, generated 200 programs/s
round 0 without  judged 0.400 programs/s, generated 300 programs/s
round 1 with     judged 0.100 programs/s, generated 200 programs/s
ratio with/without: judged 1.250, generated 0.667
round 0 with     judged 0.700 programs/s, generated 200 programs/s
"""


def test_a_block_ends_at_its_ratio_line_and_a_dead_process_is_left_out():
    bs = blocks(TWO_SEEDS)
    assert bs == [([0.5], [1.0]), ([0.9, 0.1], [0.4])]


def test_the_pooled_ratio_weights_arm_runs_equally():
    # with: (0.5 + 0.9 + 0.1) / 3 = 0.5; without: (1.0 + 0.4) / 2 = 0.7
    assert abs(pooled(blocks(TWO_SEEDS)) - 0.5 / 0.7) < 1e-12


def test_the_interval_holds_the_ratios_of_one_seed_alone():
    lo, hi, below = interval(blocks(TWO_SEEDS), 2000, 0.85)
    assert (round(lo, 3), round(hi, 3)) == (0.5, 1.25)
    assert 0.1 < below < 0.9


def test_a_file_with_no_block_exits_2(tmp_path, capsys):
    f = tmp_path / "empty.txt"
    f.write_text("round 0 with     judged 0.5 programs/s\n")
    assert main([str(f)]) == 2
    assert "no seed's block" in capsys.readouterr().err

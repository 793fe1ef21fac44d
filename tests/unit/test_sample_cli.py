"""``aliasfuzz sample``: what it prints about each program."""

import re

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

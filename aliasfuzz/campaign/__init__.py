"""Fuzzing campaigns: isolated workers, shrinking, corpus, journal, history, replay."""

from aliasfuzz.campaign.options import CampaignOptions

__all__ = ["CampaignOptions", "run_campaign"]


def run_campaign(*args, **kwargs):
    """See :func:`aliasfuzz.campaign.driver.run_campaign` (imported lazily: it needs torch)."""
    from aliasfuzz.campaign.driver import run_campaign as _run

    return _run(*args, **kwargs)

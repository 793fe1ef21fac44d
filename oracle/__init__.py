"""The oracle: exact alias model, ground truth per candidate, differential checks, verdicts."""

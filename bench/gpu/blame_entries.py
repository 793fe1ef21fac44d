"""Blame each corpus entry folder given on its recorded pipeline, on CUDA (every stage in a
child interpreter), and match the root with the blamed stage against ``corpus/known.toml``.

Usage (device machine, from the repository root, after ``bench/gpu/h200.sh setup``):
``PYTHONPATH=/tmp/site:. python3 bench/gpu/blame_entries.py ENTRY_DIR ...``. Prints numbers;
asserts nothing.
"""

import json
import sys
import time
from pathlib import Path

from aliasfuzz.campaign.known import load_known, match
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import blame_program
from aliasfuzz.passes import hygiene

hygiene.setup_process()
bugs = load_known(Path("corpus"))
for d in sys.argv[1:]:
    m = json.loads(Path(d, "meta.json").read_text())
    p = Program.loads(Path(d, "program.json").read_text())
    exp = m["expected"]
    t = time.time()
    try:
        b = blame_program(p, exp["pipeline"], exp["verdict"], exp["check"], device="cuda",
                          isolate=True)
    except Exception as e:
        print(m["id"], "blame raised", type(e).__name__, str(e)[:300])
        continue
    root = dict(m["root"], stage=b.stage or m["root"]["stage"])
    hit, rel = match(bugs, root, set(m["ops"]), {exp["pipeline"]})
    print(m["id"], "stage", b.stage, "reason", getattr(b, "reason", ""),
          "known", hit.issue if hit else None, "related", [r.issue for r in rel],
          f"{time.time() - t:.0f}s")
    for s, said in b.trail:
        print("   ", s, said[:160])

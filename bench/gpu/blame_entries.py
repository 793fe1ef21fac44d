"""Blame each entry folder given (on its recorded pipeline, on CUDA) and match known.toml."""
import json, sys, time
from pathlib import Path
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import blame_program
from aliasfuzz.passes import hygiene
from aliasfuzz.campaign.known import load_known, match
hygiene.setup_process()
bugs = load_known(Path("corpus"))
for d in sys.argv[1:]:
    m = json.load(open(f"{d}/meta.json"))
    p = Program.loads(open(f"{d}/program.json").read())
    t = time.time()
    try:
        b = blame_program(p, m["expected"]["pipeline"], m["expected"]["verdict"], m["expected"]["check"], device="cuda", isolate=True)
    except Exception as e:
        print(m["id"], "blame raised", type(e).__name__, str(e)[:300]); continue
    root = dict(m["root"]); root["stage"] = b.stage or root["stage"]
    hit, rel = match(bugs, root, set(m["ops"]), {m["expected"]["pipeline"]})
    print(m["id"], "stage", b.stage, "reason", getattr(b, "reason", ""), "known", hit.issue if hit else None,
          "related", [r.issue for r in rel], f"{time.time()-t:.0f}s")
    for s, said in b.trail:
        print("   ", s, said[:160])

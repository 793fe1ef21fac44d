"""Trimmed metas (root, trail, ops) of the fourth audit's corpus, the four re-blamed entries
blamed again with the current blame (tests/data/rootclass/README.md).

Run: ``.venv/bin/python tests/data/rootclass/make_cfresh4.py`` (needs /work/cfresh4).
"""
import json
from pathlib import Path

from aliasfuzz.campaign import _judge
from aliasfuzz.campaign.corpus import roots
from aliasfuzz.fuzz.ir import Program
from aliasfuzz.oracle.blame import blame_program

C = Path("/work/cfresh4/corpus")
REBLAME = {"crash-unblamed-inductor-69f02e9212", "crash-unblamed-inductor-reinplace-8be8a9c905",
           "miscompile-lowering-1b9297cb46", "miscompile-lowering-7e27ad2854"}
out = []
for d in sorted(C.iterdir()):
    m = json.loads((d / "meta.json").read_text())
    row = {"entry": d.name, "root": m["root"], "trail": m["trail"], "ops": m["ops"],
           "reblamed": False}
    if d.name in REBLAME:
        p = Program.from_json(json.loads((d / "program.json").read_text()))
        pipe, check = m["expected"]["pipeline"], m["expected"]["check"]
        if check.startswith("signal:"):
            o = {"verdict": "crash", "check": check, "explanation": m["explanation"],
                 "decisions": []}
        else:
            o = _judge.evaluate(p, pipe, "cpu")
        crash = o["verdict"] == "crash"
        b = blame_program(p, pipe, o["verdict"], o["check"], error=o["explanation"] if crash else None)
        bj = b.to_json()
        [root] = roots(p, o, pipe, bj)
        row.update(root=root, trail=bj["trail"], reblamed=True)
    out.append(row)
Path("tests/data/rootclass/cfresh4.json").write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
for r in out:
    print(r["entry"], r["root"])

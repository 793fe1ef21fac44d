"""Raw ``@triton.jit`` launches on pipelines that trace outside Dynamo are refused.

``make_fx`` (the ``fx-reinplace`` pipeline) does not capture a raw launch: PyTorch documents
``torch.library.wrap_triton`` as the way to trace one (``torch/_library/triton.py``). The
fourth audit's false positive ``miscompile-reinplace-3712e519e2`` (kept in
``tests/data/not_findings``) was such a program, judged through a ``wrap_triton`` route of
aliasfuzz's own. The program is refused before tracing (``unsupported``, rule
``make-fx-raw-triton-launch``); the Dynamo pipelines, which capture the launch, still judge it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("triton")

from aliasfuzz.fuzz.ir import Program  # noqa: E402
from aliasfuzz.fuzz.ops import OpKind, lookup  # noqa: E402
from aliasfuzz.fuzz.sample import generate  # noqa: E402
from aliasfuzz.oracle.judge import judge  # noqa: E402
from aliasfuzz.oracle.verdict import Verdict  # noqa: E402
from aliasfuzz.passes import pipelines  # noqa: E402
from aliasfuzz.passes.pipelines import NON_DYNAMO_TRACING, run_pipeline, uncaptured_launch  # noqa: E402

NOT_FINDINGS = Path(__file__).resolve().parents[1] / "data" / "not_findings"
#: former findings on fx-reinplace that launched a raw kernel (the first is the audited one)
ENTRIES = ("miscompile-reinplace-3712e519e2", "miscompile-functionalization-c10211248b")


def _program(entry: str = ENTRIES[0]) -> Program:
    return Program.loads((NOT_FINDINGS / entry / "program.json").read_text())


@pytest.mark.parametrize("entry", ENTRIES)
def test_former_fx_findings_on_a_raw_launch_are_unsupported_before_tracing(entry, monkeypatch):
    def never(*_a, **_k):
        raise AssertionError("the program was traced")

    monkeypatch.setattr(pipelines, "trace_functional", never)
    p = _program(entry)
    j = judge(p, "fx-reinplace")
    assert (j.verdict, j.check) == (Verdict.UNSUPPORTED, "unsupported"), j.explanation
    assert j.explanation.startswith("make-fx-raw-triton-launch: ")
    launch = next(o.op for o in p.body if o.op.startswith("tk."))
    assert "wrap_triton" in j.explanation and launch in j.explanation
    assert not j.verdict.is_finding


@pytest.mark.parametrize("pipeline", ["aot_eager", "inductor-reinplace"])
def test_the_same_program_is_still_judged_through_dynamo(pipeline):
    j = judge(_program(), pipeline)
    assert j.verdict is not Verdict.UNSUPPORTED, j.explanation
    assert j.execution.failure is None, j.execution.failure
    assert j.verdict is Verdict.OK, j.explanation  # torch.compile agrees with eager (audit)


def test_every_generated_launch_is_refused_and_only_launches_are():
    # the static rule against the registry: programs of the default families, some with
    # kernel launches, some without (seed 7 draws both)
    progs = generate(40, 7, max_statements=4)
    launching = [p for p in progs if any(lookup(o.op).kind is OpKind.TRITON for o in p.body)]
    assert launching and len(launching) < len(progs)
    for p in progs:
        assert (uncaptured_launch(p) is not None) == (p in launching)
    ex = run_pipeline("fx-reinplace", launching[0], ())
    assert (ex.failure.stage, ex.failure.error_type) == ("trace", "UncapturedTritonLaunch")
    assert ex.graph_before is None and ex.outputs == ()
    assert NON_DYNAMO_TRACING == {"fx-reinplace"}  # torchscript refuses launches as unscriptable

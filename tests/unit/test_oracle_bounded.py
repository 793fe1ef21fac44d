"""The oracle's exact enumeration is bounded: a view over a very large storage is decided by
the memory model (or left unknown with a reason), within bounded memory.

The graphs are traced on fake tensors (``make_fx``, ``tracing_mode="fake"``): a storage of
10**8 float32 elements is declared, never allocated. The ground truth runs in a child
process whose address space is capped (``RLIMIT_AS``) at what it has mapped after its
imports plus 1 GiB: enumerating a 10**8-element footprint into int64 byte offsets needs
3.2 GB (the campaign worker that died in ``numpy.unique`` did this), so the child fails
if any footprint is enumerated whole.
"""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.ops.core import ENUM_LIMIT, ValueMeta

_CHILD = """
import json, resource
import torch
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.fx.experimental.proxy_tensor import make_fx
from aliasfuzz.oracle.candidates import candidates, ground_truth

N = 10**8  # elements of the declared storage (400 MB as float32; never allocated)


def on_input(x, i, v):  # index_put on a huge input view, no write-back: unsafe (rule 4)
    return x.index_put((i,), v)


def on_intermediate(x, i, v):  # index_put on a huge dead intermediate: safe
    y = x * 2
    return y.index_put((i,), v).sum()


def strided_span(x, i, v):  # 10 rows 10**7 elements apart: huge span, small footprint
    return x.index_put((i,), v)


with FakeTensorMode():
    base = torch.empty(N)
    big = base.as_strided((10**4, 10**4), (10**4, 1))
    span = base.as_strided((10, 10**3), (10**7, 1))
    idx = torch.zeros(3, dtype=torch.long)
    rows, row = torch.ones(3, 10**4), torch.ones(3, 10**3)

graphs = {
    name: make_fx(torch.func.functionalize(fn), tracing_mode="fake")(*args)
    for name, fn, args in [
        ("on_input", on_input, (big, idx, rows)),
        ("on_intermediate", on_intermediate, (big, idx, rows)),
        ("strided_span", strided_span, (span, idx, row)),
    ]
}
status = open("/proc/self/status").read()
mapped = int(status.split("VmSize:")[1].split()[0]) * 1024
resource.setrlimit(resource.RLIMIT_AS, (mapped + (1 << 30), resource.RLIM_INFINITY))
out = {}
for name, gm in graphs.items():
    (cand,) = [c for c in candidates(gm.graph) if c.kind == "index_put"]
    t = ground_truth(gm.graph, cand)
    out[name] = [t.status, t.reason, t.witness.rule if t.witness else None]
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def truths():
    r = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(_CHILD)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stderr[-3000:]
    return json.loads(r.stdout.strip().splitlines()[-1])


def test_a_huge_input_view_is_decided_by_the_memory_model(truths):
    status, reason, rule = truths["on_input"]
    assert (status, rule) == ("unsafe", 4), reason
    assert "does not overwrite" in reason


def test_a_huge_dead_intermediate_is_proven_safe(truths):
    status, reason, _ = truths["on_intermediate"]
    assert status == "safe", reason
    assert "past the exact enumeration's limit" in reason and "memory model" in reason


def test_a_view_huge_only_in_span_is_still_enumerated_exactly(truths):
    status, reason, rule = truths["strided_span"]
    assert (status, rule) == ("unsafe", 4), reason
    assert "limit" not in reason  # 10**4 elements: the exact path, with its witness


def test_value_checks_refuse_to_enumerate_a_huge_view():
    huge = ValueMeta((10**4, 10**4), (10**4, 1), 0, "float32", "s", 4 * 10**8)
    with pytest.raises(InvalidArgument, match="too large to check"):
        huge.elements()
    with pytest.raises(InvalidArgument, match="too large to check"):
        huge.byte_footprint()
    # decided from the strides alone, without enumerating
    assert not huge.has_internal_overlap()
    assert ValueMeta((10**5, 10**5), (0, 1), 0, "float32", "s", 4 * 10**5).has_internal_overlap()
    # a layout the strides cannot decide, past the limit: refused, never guessed
    windows = ValueMeta((ENUM_LIMIT, 4), (1, 1), 0, "float32", "s", 4 * (ENUM_LIMIT + 3))
    with pytest.raises(InvalidArgument, match="too large"):
        windows.has_internal_overlap()
    small = ValueMeta((4, 3), (1, 1), 0, "float32", "s", 24)  # unfold-like windows overlap
    assert small.has_internal_overlap()

"""The needed-bytes lower bound (oracle/needed.py, issue 14): each input element read
before it is written, each input element written, each fresh output, once."""

from __future__ import annotations

import torch

from aliasfuzz.oracle.needed import needed_bytes
from aliasfuzz.oracle.witness import scaled


def test_a_slice_update_needs_only_its_elements():
    def f(x):
        x[0:2] += 0.5

    n = needed_bytes(f, (torch.arange(3000.0),))
    assert (n.reads, n.writes, n.outputs) == (8, 8, 0)


def test_indexing_reads_and_writes_only_the_indexed_rows():
    def f(field, rows, work):  # shared case c06
        torch.mul(field[rows], 0.5, out=work)
        field[rows] = work

    n = needed_bytes(f, (torch.arange(64.0).reshape(16, 4), torch.tensor([1, 5, 9]), torch.zeros(3, 4)))
    # field rows 48 + rows 24 read; work 48 and field rows 48 written (work is not read: out=)
    assert (n.reads, n.writes, n.outputs) == (72, 96, 0)


def test_a_functional_op_needs_its_input_and_its_output():
    n = needed_bytes(lambda x: x.sin() + 1, (torch.randn(10, 10),))
    assert (n.reads, n.writes, n.outputs) == (400, 0, 400)


def test_a_value_the_program_wrote_is_not_read_again():
    def f(x):
        x.fill_(1.0)
        x.mul_(2.0)

    n = needed_bytes(f, (torch.randn(8),))
    assert (n.reads, n.writes) == (0, 32)


def test_eager_failure_gives_no_bound():
    def f(x):
        raise RuntimeError("boom")

    assert needed_bytes(f, (torch.randn(3),)) is None


def test_scaled_doubles_every_largest_dimension_and_keeps_indices():
    x, rows = torch.randn(16, 4), torch.tensor([1, 5, 9])
    sx, srows = scaled((x, rows))
    assert sx.shape == (32, 4) and torch.equal(srows, rows)

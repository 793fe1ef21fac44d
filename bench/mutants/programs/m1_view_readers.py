"""An index_put on an intermediate y, while a view of y taken before it is read after it.
Eagerly the out-of-place index_put leaves y alone, so v (row 1 of y) keeps 2 * x[1]; writing
the index_put into y's buffer would change what v reads.

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m1_view_readers (bench/mutants)
"""
import torch


def program(x):
    y = x * 2
    v = y[1]
    z = torch.index_put(y, (torch.tensor([1]),), torch.tensor(100.0))
    return z, v + 0


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

"""An index_put on an intermediate y that is read again after the index_put. Eagerly y keeps
2 * x; writing the index_put into y's buffer would change the second result.

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m3_no_overlap (bench/mutants)
"""
import torch


def program(x):
    y = x * 2
    z = torch.index_put(y, (torch.tensor([1]),), torch.tensor(100.0))
    return z, y + 1


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

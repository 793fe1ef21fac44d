"""An index_put on an intermediate y that nothing reads afterwards: it can write into y's
buffer, and a copy of y is a missed reinplace (a full-size temporary for a one-row update).

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m5_always_clone (bench/mutants)
"""
import torch


def program(x):
    y = x * 2
    return torch.index_put(y, (torch.tensor([1]),), torch.tensor(100.0))


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

"""An index_put of one row into an input x that nothing reads afterwards: it can write into
x in place, and a copy of x is a missed reinplace (a full-size temporary and a copy-back for
a one-row update of an input).

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m5_always_clone (bench/mutants)
"""
import torch


def program(x):
    x.index_put_((torch.tensor([1]),), torch.tensor(100.0))


def inputs():
    return (torch.arange(48.0).reshape(16, 3),)

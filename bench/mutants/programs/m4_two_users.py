"""An index_put on an intermediate y that has two other readers, both before the index_put
(their results are the values it writes, so Inductor's reorder_for_locality cannot sink them
below it). Nothing reads y afterwards, so the index_put can write into y's buffer; a copy of
y is a missed reinplace (a full-size temporary for a one-row update).

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m4_two_users (bench/mutants)
"""
import torch


def program(x):
    y = x * 2
    a = y.sum()
    b = y.amax()
    z = torch.index_put(y, (torch.tensor([1]),), a + b)
    return z


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

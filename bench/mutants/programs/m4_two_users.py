"""An index_put into an input x that has two other readers, both before the index_put
(their results are the values it writes, so Inductor's reorder_for_locality cannot sink them
below it). Nothing reads x afterwards, so the index_put can write into x in place; a copy of
x is a missed reinplace (a full-size temporary and a copy-back for a one-row update).

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m4_two_users (bench/mutants)
"""
import torch


def program(x):
    a = x.sum()
    b = x.amax()
    x.index_put_((torch.tensor([1]),), a + b)


def inputs():
    return (torch.arange(48.0).reshape(16, 3),)

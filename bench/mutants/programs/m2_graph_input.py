"""An out-of-place index_put on the input x, which the program does not mutate. Writing the
index_put into x's buffer would change the caller's tensor.

expect:
  inductor-reinplace: ok
device: cpu
report: aliasfuzz mutant m2_graph_input (bench/mutants)
"""
import torch


def program(x):
    return torch.index_put(x, (torch.tensor([1]),), torch.tensor(100.0))


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

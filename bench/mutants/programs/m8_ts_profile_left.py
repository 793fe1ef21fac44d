"""A scripted elementwise function called three times: one profiling run, then optimized runs.
The optimized graph must hold no prim::profile node.

expect:
  torchscript: ok
device: cpu
report: aliasfuzz mutant m8_ts_profile_left (bench/mutants)
"""
import torch

calls = 3


def program(x):
    return x * 2 + 1


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

"""An add on an intermediate y whose value is also returned. The add can only be done in place
if nothing reads y afterwards; here the second result reads it.

expect:
  fx-reinplace: ok
device: cpu
report: aliasfuzz mutant m7_fx_later_uses (bench/mutants)
"""
import torch


def program(x):
    y = x * 2
    z = y + 1
    return z, y


def inputs():
    return (torch.arange(12.0).reshape(4, 3),)

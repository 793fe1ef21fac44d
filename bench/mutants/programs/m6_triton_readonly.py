"""A user Triton kernel adds 1 to every element of the input x in place; the program returns
nothing. Eagerly x ends up x + 1; if the compiled graph forgets the write, x is unchanged.

expect:
  aot_eager: ok
device: cpu
report: aliasfuzz mutant m6_triton_readonly (bench/mutants)
"""
import torch
import triton
import triton.language as tl


@triton.jit
def add_one(ptr, BLOCK: tl.constexpr):
    offs = tl.arange(0, BLOCK)
    tl.store(ptr + offs, tl.load(ptr + offs) + 1.0)


def program(x):
    add_one[(1,)](x, BLOCK=8)


def inputs():
    return (torch.arange(8.0),)

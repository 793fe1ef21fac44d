"""A product whose backward reads one intermediate twice: d(sin(x) * x)/dx needs both
cos(x) * x and sin(x), built from the same incoming gradient. The forward has nothing to
reinplace; a reinplacing fault in the backward graph overwrites a value a later op reads,
so only the gradient of x differs.

expect:
  aot_eager: ok
  inductor-reinplace: ok
  inductor: ok
device: cpu
report: aliasfuzz mutant m9_backward_reinplace (bench/mutants)
"""
import torch


def program(x, w):
    y = x.sin() * x
    z = y.clone()
    z.add_(w)
    return z.cos()


def inputs():
    x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3).requires_grad_()
    return (x, torch.ones(3))

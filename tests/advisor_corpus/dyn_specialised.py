import torch

import compiler

EXPECT = "dynamic.specialised"


def f(x):
    n = x.shape[0]  # PLANTED
    out = x
    for i in range(n):
        out = out + i
    return out


def run():
    return compiler.explore(f, torch.randn(4), backend="eager", dynamic=True)

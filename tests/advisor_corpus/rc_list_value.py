import torch

import compiler

EXPECT = "recompile.value"


def f(x, sizes):
    return x.reshape(sizes).sum()  # PLANTED


def driver(x):
    g = torch.compile(f, backend="eager")
    g(x, [2, 8])
    g(x, [4, 4])
    g(x, [2, 2, 4])


def run():
    return compiler.explore(driver, torch.randn(16), wrap=False)

import torch

import compiler

EXPECT = "recompile.dtype"


def f(x):
    return x.sin() + 1


def driver(x):
    g = torch.compile(f, backend="eager")
    g(x)
    g(x.double())


def run():
    return compiler.explore(driver, torch.randn(8), wrap=False)

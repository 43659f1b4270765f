import torch

import compiler

EXPECT = "recompile.size"


def f(x):
    return torch.tanh(x) * 2


def driver(n):
    g = torch.compile(f, backend="eager")
    for size in (n, 2 * n, 3 * n):
        g(torch.randn(size, 4))


def run():
    return compiler.explore(driver, 8, wrap=False)

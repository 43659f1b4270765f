import torch

import compiler

EXPECT = "recompile.limit"


def f(x, tag):
    return x * 2 if tag == "first" else x + 1  # PLANTED


def driver(x):
    g = torch.compile(f, backend="eager")
    for i in range(10):
        g(x, f"tag{i}")


def run():
    return compiler.explore(driver, torch.randn(8), wrap=False)

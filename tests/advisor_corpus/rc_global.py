import torch

import compiler

EXPECT = "recompile.global"
SCALE = 2


def f(x):
    return x * SCALE  # PLANTED


def driver(x):
    global SCALE
    g = torch.compile(f, backend="eager")
    g(x)
    SCALE = 3
    g(x)
    SCALE = 2


def run():
    return compiler.explore(driver, torch.randn(4), wrap=False)

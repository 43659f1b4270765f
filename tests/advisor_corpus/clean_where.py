import torch

import compiler

EXPECT = None


def f(x):
    y = x * 2
    return torch.where(y.sum() > 0, y.cos(), y.sin())


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

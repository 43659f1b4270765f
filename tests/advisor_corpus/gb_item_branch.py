import torch

import compiler

EXPECT = "graph_break.scalar_branch"


def f(x):
    best = x.argmax()
    if best.item() == 0:  # PLANTED
        return x
    return x * 2


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

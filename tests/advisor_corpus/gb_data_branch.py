import torch

import compiler

EXPECT = "graph_break.data_dependent_branch"


def f(x):
    y = x * 2
    if y.sum() > 0:  # PLANTED
        return y.cos()
    return y.sin()


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

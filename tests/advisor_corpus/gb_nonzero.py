import torch

import compiler

EXPECT = "graph_break.dynamic_output_shape"


def f(x):
    y = x * 2
    idx = torch.nonzero(y > 0)  # PLANTED
    return idx.float().sum() + y.sum()


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

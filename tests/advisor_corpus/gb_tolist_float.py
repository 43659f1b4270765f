import torch

import compiler

EXPECT = "graph_break.scalar_output"


def f(x):
    y = x.softmax(0)
    weights = y.tolist()  # PLANTED
    return x * weights[0]


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

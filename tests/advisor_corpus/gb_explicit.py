import torch

import compiler

EXPECT = "graph_break.explicit"


def f(x):
    y = x.sin()
    torch._dynamo.graph_break()  # PLANTED
    return y.cos()


def run():
    return compiler.explore(f, torch.randn(4), backend="eager")

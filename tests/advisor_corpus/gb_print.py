import torch

import compiler

EXPECT = "graph_break.logging"


def f(x):
    y = torch.relu(x) + 1
    print("activations ready")  # PLANTED
    return y * 3


def run():
    return compiler.explore(f, torch.randn(8), backend="aot_eager")

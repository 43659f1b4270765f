import torch

import compiler

EXPECT = "graph_break.scalar_output"


def f(x):
    scale = x.abs().max().item()  # PLANTED
    return x / scale


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

import torch

import compiler

EXPECT = "graph_break.disabled"


@torch.compiler.disable
def log_stats(t):
    return t.mean()


def f(x):
    y = x.exp()
    m = log_stats(y)  # PLANTED
    return y - m


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

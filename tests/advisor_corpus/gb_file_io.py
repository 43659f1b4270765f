import io

import torch

import compiler

EXPECT = "graph_break.unsupported_call"


def f(x):
    buf = io.BytesIO()  # PLANTED
    torch.save(x, buf)
    return x + 1


def run():
    return compiler.explore(f, torch.randn(4), backend="eager")

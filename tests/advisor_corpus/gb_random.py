import random

import torch

import compiler

EXPECT = "graph_break.unsupported_call"


def f(x):
    y = x.sin()
    noise = random.random()  # PLANTED
    return y * noise


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

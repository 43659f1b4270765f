import random

import torch

import compiler

EXPECT = "graph_break.unsupported_call"


def f(x):
    y = x.sin()
    # random.gauss, not random.random: Dynamo traces random.random from torch 2.14 (no
    # break left to find), while it skips random.gauss on 2.13 and 2.14.1 alike
    noise = random.gauss(0.0, 1.0)  # PLANTED
    return y * noise


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

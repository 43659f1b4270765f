import torch

import compiler

EXPECT = "compile_time.unrolled_loop"


def f(x):
    for i in range(400):
        x = torch.sin(x) * 0.5 + i  # PLANTED
    return x


def run():
    return compiler.explore(f, torch.randn(8), backend="eager")

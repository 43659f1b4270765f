import torch

import compiler

EXPECT = "recompile.value"


def f(x, activation):
    return torch.relu(x) if activation == "relu" else torch.tanh(x)  # PLANTED


def driver(x):
    g = torch.compile(f, backend="eager")
    for act in ("relu", "tanh", "gelu"):
        g(x, act)


def run():
    return compiler.explore(driver, torch.randn(8), wrap=False)

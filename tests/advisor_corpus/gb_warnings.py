import warnings

import torch

import compiler

EXPECT = "graph_break.logging"


def f(x):
    if x.dim() != 2:
        raise ValueError("2-D input expected")
    warnings.warn("f is deprecated", DeprecationWarning, stacklevel=2)  # PLANTED
    return x @ x.T


def run():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return compiler.explore(f, torch.randn(4, 4), backend="eager")

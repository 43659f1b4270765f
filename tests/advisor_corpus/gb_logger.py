import logging

import torch

import compiler

EXPECT = "graph_break.logging"
log = logging.getLogger("advisor_corpus.gb_logger")


def f(x):
    y = torch.softmax(x, -1)
    log.debug("entropy step")  # PLANTED
    return (y * y.log()).sum()


def run():
    return compiler.explore(f, torch.randn(4, 8), backend="eager")

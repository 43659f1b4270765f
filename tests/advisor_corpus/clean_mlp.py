import torch
from torch import nn

import compiler

EXPECT = None


def run():
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.LayerNorm(32), nn.Linear(32, 4))
    return compiler.explore(model, torch.randn(8, 16), backend="aot_eager")

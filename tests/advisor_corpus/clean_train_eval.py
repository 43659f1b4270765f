import torch
from torch import nn

import compiler

EXPECT = None  # one recompile per mode is how train()/eval() is meant to work


def run():
    model = nn.Sequential(nn.Linear(8, 8), nn.Dropout(0.1), nn.BatchNorm1d(8))

    def train_then_validate(x):
        g = torch.compile(model, backend="eager")
        g(x)
        model.eval()
        with torch.no_grad():
            g(x)
        model.train()

    return compiler.explore(train_then_validate, torch.randn(4, 8), wrap=False)

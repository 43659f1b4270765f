import torch
from torch import nn

import compiler

EXPECT = None


def run():
    model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 1))
    opt = torch.optim.SGD(model.parameters(), lr=0.1)
    compiled = torch.compile(model, backend="aot_eager")

    def step(x, y):
        loss = nn.functional.mse_loss(compiled(x), y)
        loss.backward()
        opt.step()
        opt.zero_grad()
        return loss

    return compiler.explore(step, torch.randn(4, 8), torch.randn(4, 1), wrap=False)

import torch
from torch import nn

import compiler

EXPECT = "graph_break.logging"


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(16, 16)

    def forward(self, x):
        h = torch.relu(self.lin(x))
        print("block output", h.shape)  # PLANTED
        return h + x


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.ModuleList(Block() for _ in range(2))

    def forward(self, x):
        for b in self.blocks:
            x = b(x)
        return x


def run():
    return compiler.explore(Net(), torch.randn(4, 16), backend="aot_eager")

"""The program of flat_four_shapes.log.gz: one frame compiled for four shapes.

    TORCHINDUCTOR_FORCE_DISABLE_CACHES=1 TORCH_TRACE=DIR python make.py   # torch 2.13 CPU
"""

import torch


def flat(x):
    return torch.relu(x @ x.T).sum(0) * 2.0


fn = torch.compile(flat, dynamic=False)
for n in (8, 16, 24, 32):
    fn(torch.randn(n, 4))

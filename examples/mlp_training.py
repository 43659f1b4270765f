"""Three training steps of a tiny MLP, with the model compiled by torch.compile.

Dynamo traces the module's forward; AOTAutograd splits the joint graph into a
forward graph and a backward graph, and Inductor generates code for each. The
AdamW step itself runs eagerly here.

In the report, look for the two output codes of compile ``0/0`` (``forward`` and
``backward``): matmuls become library calls (``extern_kernels.addmm``/``mm``), ReLU
and its gradient (``threshold_backward``) fused C++ kernels. The compiled frame is
torch's module wrapper (``inner``); "Reached from" points at the line in ``main``.

Run: ``python -m explorer report examples/mlp_training.py -o report_mlp``
(the page, and the Markdown report beside it).
"""

import torch
from torch import nn


def main() -> None:
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.ReLU(), nn.Linear(32, 4))
    compiled = torch.compile(model)  # forward and backward both go through Inductor
    opt = torch.optim.AdamW(model.parameters(), lr=1e-2)
    x, target = torch.randn(64, 16), torch.randn(64, 4)
    for step in range(3):
        opt.zero_grad()
        loss = nn.functional.mse_loss(compiled(x), target)
        loss.backward()
        opt.step()
        print(f"step {step}: loss {loss.item():.4f}")


if __name__ == "__main__":
    main()

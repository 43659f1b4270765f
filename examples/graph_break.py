"""A graph break and a recompile, small enough to read every stage of.

``scale_or_clip`` branches on the *value* of a tensor (``y.sum() > 0``) and then
prints. Dynamo cannot put either into an FX graph, so it splits the function:
one graph up to the branch, then resume functions
(``torch_dynamo_resume_in_scale_or_clip_at_...``) for the code after it.
Calling it with a longer input fails the shape guards, so Dynamo compiles the
frame again (``0/1``).

In the report, look for the graph breaks (where, why, torch's hints), the
recompile reason (``size mismatch``) and the C++ kernels Inductor generated.
Run: ``python -m explorer report examples/graph_break.py -o report``
(the page, and the Markdown report beside it).
"""

import torch


def scale_or_clip(x: torch.Tensor) -> torch.Tensor:
    y = torch.sin(x) * 2 + 1
    if y.sum() > 0:  # depends on the data: graph break
        print("positive sum: scaling")
        return y * 0.5
    return torch.clamp(y, min=0.0)


def main() -> None:
    compiled = torch.compile(scale_or_clip)  # default backend: inductor
    torch.manual_seed(0)
    for n in (8, 16):  # a second shape: a guard fails, then a recompile
        x = torch.randn(n)
        out = compiled(x)
        print(f"n={n}: out[:3] = {[round(v, 4) for v in out[:3].tolist()]}")


if __name__ == "__main__":
    main()

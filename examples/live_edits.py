"""Three edits of one function, recompiled live, and what ``compiler.diff`` says of each.

A script, not a notebook: ``explorer.live`` compiles each edit in its worker process
(Inductor on the CPU); ``.wait()`` blocks until the view shows it. The edits change
the fusion (a matmul and a reduction join), the shapes (``dynamic=True``) and the control
flow (a data-dependent branch: a graph break).
Run: ``python examples/live_edits.py``
"""

import torch

import compiler
import explorer

V1 = "def f(x):\n    y = torch.relu(x)\n    return y * 2\n"
EDITS = [
    ("a matmul and a reduction", "def f(x):\n    y = torch.relu(x @ x)\n    return y.sum(0) * x\n"),
    ("dynamic=True", None),
    (
        "a data-dependent branch",
        "def f(x):\n    y = torch.relu(x @ x)\n    if y.sum() > 0:\n        y = y * 2\n"
        "    return y.sum(0) * x\n",
    ),
]


def main() -> None:
    w = explorer.live(V1, torch.randn(16, 16), debounce_ms=0)
    try:
        if not w.wait(600) or w.error:
            raise SystemExit(f"the first version failed: {w.error}")
        for what, source in EDITS:
            before = w.history[-1]
            if source is None:
                w.editor.options = {**w.editor.options, "dynamic": True}
            else:
                w.source = source
            if not w.wait(600) or w.error:
                raise SystemExit(f"the edit {what!r} failed: {w.error}")
            print(f"{what}: {compiler.diff(before, w.history[-1]).summary}")
    finally:
        w.close()


if __name__ == "__main__":
    main()

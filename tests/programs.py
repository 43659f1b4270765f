"""The seed programs the tests compile: small versions of what our users' documents show.

They live in a module of their own so a subprocess run under TORCH_TRACE and an
in-process ``explore`` compile the very same code (same file, same lines).
"""

from __future__ import annotations

import torch
from torch import nn


def pointwise(x):
    y = torch.sin(x) + 1
    return (y * 2).relu()


def data_dependent(x):
    if x.sum() > 0:  # the branch depends on tensor data: a graph break
        return x.cos()
    return x.sin()


def with_print(x):
    y = x * 2
    print("halfway there")
    return y + 1


def specialises_on_size(x):
    """Branches on a dimension's size: a dimension marked dynamic is specialised."""
    if x.shape[0] == 4:
        return x * 2
    return x + 1


def nested_after_break(x):
    x = x.sin()
    print("a nested def and a lambda after the break")

    def twice(y, k=3, *, shift=1.0):
        return y * 2 + k - shift

    return (lambda z: z + x)(twice(x))


def closure_after_break(x):
    s = x.cos()
    print("a nested def reading a variable of its frame")

    def scaled(y):
        return y * s

    return scaled(x).sum()


class Printer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = nn.Linear(8, 8)

    def forward(self, x):
        h = self.lin(x)
        print("inside forward")
        return torch.tanh(h)


class PrintLoop(nn.Module):
    """A loop over layers (Dynamo unrolls it), a print (a graph break), another loop."""

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(8, 8) for _ in range(3)])

    def forward(self, x):
        for layer in self.layers:
            x = torch.relu(layer(x))
        print("after the first loop", tuple(x.shape))
        for i, layer in enumerate(self.layers):
            x = x + layer(x) * (i + 1)
        return x


def shape_loop(make_compiled):
    """Calls a compiled function at three shapes: the second call recompiles."""
    fn = make_compiled(pointwise)
    for n in (4, 8, 16):
        fn(torch.randn(n, 3))


class FeaturePyramid(nn.Module):
    """A tiny conv feature pyramid: two stages and a top-down merge."""

    def __init__(self) -> None:
        super().__init__()
        self.c1 = nn.Conv2d(3, 8, 3, padding=1)
        self.c2 = nn.Conv2d(8, 16, 3, stride=2, padding=1)
        self.lat1 = nn.Conv2d(8, 8, 1)
        self.lat2 = nn.Conv2d(16, 8, 1)

    def forward(self, x):
        f1 = torch.relu(self.c1(x))
        f2 = torch.relu(self.c2(f1))
        p2 = self.lat2(f2)
        up = nn.functional.interpolate(p2, scale_factor=2.0, mode="nearest")
        return self.lat1(f1) + up, p2


def mlp_training_step(backend: str = "aot_eager"):
    """Returns a training step whose model is compiled: forward, backward, AdamW."""
    torch.manual_seed(0)
    model = nn.Sequential(nn.Linear(16, 32), nn.GELU(), nn.Linear(32, 4))
    compiled = torch.compile(model, backend=backend)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3)
    x, target = torch.randn(8, 16), torch.randn(8, 4)

    def step():
        opt.zero_grad()
        loss = nn.functional.mse_loss(compiled(x), target)
        loss.backward()
        opt.step()
        return loss

    return step


def dynamic_fn(x, y):
    return (x @ y).softmax(dim=-1)


MARKUP = "<img src=x onerror=alert(1)>"


def markup_program(folder):
    """A module, written to ``folder`` and imported, whose comments carry HTML markup:
    the views must show it as text and never let it run."""
    return _module(
        folder,
        "markup_program",
        f"""
        import torch


        def evil(x):  # {MARKUP}
            return torch.sin(x) + 1  # </script>{MARKUP}
        """,
    )


BOLD_MARKUP = "<b>splits</b>"


def markup_branch_program(folder):
    """A module, written to ``folder`` and imported, whose data-dependent branch (a graph
    break) carries markup in its comment: the advisor quotes that line in its finding."""
    return _module(
        folder,
        "markup_branch_program",
        f"""
        def branchy(x):
            if x.sum() > 0:  # {BOLD_MARKUP} the graph
                return x.cos()
            return x.sin()
        """,
    )


def _module(folder, name: str, source: str):
    import importlib.util
    import textwrap

    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class Blocks(nn.Module):
    """Two residual blocks in a ModuleList: a module tree like a transformer's ``h.0``."""

    def __init__(self) -> None:
        super().__init__()

        class Block(nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.lin = nn.Linear(8, 8)
                self.norm = nn.LayerNorm(8)

            def forward(self, x):
                return self.norm(torch.relu(self.lin(x)) + x)

        self.h = nn.ModuleList([Block(), Block()])
        self.head = nn.Linear(8, 2)

    def forward(self, x):
        for block in self.h:
            x = block(x)
        return self.head(x).sum()


def gpt2_training_step(n_layer: int):
    """(step, ids): one training step of an ``n_layer`` GPT-2 from ``transformers``, built
    from a config (tiny widths, the real module tree, no weights downloaded), and its
    input. ``compiler.explore(step, ids)`` compiles forward and backward."""
    import transformers

    torch.manual_seed(0)
    config = transformers.GPT2Config(
        n_layer=n_layer,
        n_embd=64,
        n_head=2,
        n_positions=32,
        vocab_size=128,
        bos_token_id=0,
        eos_token_id=0,
    )
    model = transformers.GPT2LMHeadModel(config)
    ids = torch.randint(0, 128, (1, 16))

    def step(ids: torch.Tensor) -> torch.Tensor:
        out = model(ids, labels=ids)
        out.loss.backward()
        return out.loss.detach()

    return step, ids


def compiled_call(fn, *args):
    """A build for ``compiler.decompile.verify.check``: ``fn(*args)`` compiled."""
    return lambda: lambda: torch.compile(fn, backend="eager")(*args)


def compiled_module(cls, *args):
    """A build for ``check``: a fresh ``cls()`` (seeded) compiled and called on ``args``."""

    def build():
        torch.manual_seed(0)
        module = cls()
        return lambda: torch.compile(module, backend="eager")(*args)

    return build


def decompile_builds():
    """Every program above that compiles, as builds for ``check`` (name -> build)."""
    return {
        "pointwise": compiled_call(pointwise, torch.randn(4, 4)),
        "data_dependent": compiled_call(data_dependent, torch.randn(4, 4)),
        "with_print": compiled_call(with_print, torch.randn(4, 4)),
        "nested_after_break": compiled_call(nested_after_break, torch.randn(4)),
        "closure_after_break": compiled_call(closure_after_break, torch.randn(4)),
        "dynamic_fn": compiled_call(dynamic_fn, torch.randn(4, 4), torch.randn(4, 4)),
        "Printer": compiled_module(Printer, torch.randn(2, 8)),
        "PrintLoop": compiled_module(PrintLoop, torch.randn(4, 8)),
        "FeaturePyramid": compiled_module(FeaturePyramid, torch.randn(1, 3, 16, 16)),
        "Blocks": compiled_module(Blocks, torch.randn(2, 8)),
        "mlp_training_step": lambda: mlp_training_step("eager"),
        "shape_loop": lambda: lambda: shape_loop(lambda fn: torch.compile(fn, backend="eager")),
    }


# Three programs whose recompiles each have one guard as their cause (issue 43): run live
# by ``explore`` and under TORCH_TRACE in a subprocess, the same code at the same lines.
def scheduled_lr_steps(steps: int = 3) -> None:
    """A compiled ``opt.step`` under ``LambdaLR``: it recompiles on the group's ``lr``."""
    torch.manual_seed(0)
    model = nn.Linear(4, 1)
    opt = torch.optim.Adam(model.parameters(), lr=0.01)
    sched = torch.optim.lr_scheduler.LambdaLR(opt, lambda epoch: 0.9**epoch)
    step = torch.compile(opt.step, backend="eager")
    for _ in range(steps):
        model(torch.randn(2, 4)).sum().backward()
        step()
        sched.step()


def dict_keys_calls() -> None:
    """A function called with a dict with and without a key: it recompiles on the keys."""
    lin = nn.Linear(8, 8)

    @torch.compile(backend="eager")
    def f(batch):
        y = lin(batch["x"])
        if "mask" in batch:
            y = y * batch["mask"]
        return y

    f({"x": torch.randn(2, 8)})
    f({"x": torch.randn(2, 8), "mask": torch.ones(2, 8)})


def list_length_calls() -> None:
    """A function called with lists of two lengths: it recompiles on the length."""

    @torch.compile(backend="eager")
    def f(x, xs):
        for t in xs:
            x = x + t
        return x

    for n in (1, 2):
        f(torch.ones(2), [torch.ones(2)] * n)

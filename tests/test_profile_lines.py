"""Profile lines land on the model's code: a kernel's time goes to the innermost line
that is the user's or a library's model code, never to the library's wrapper line that
happened to be the compiled frame (issue 43: a BERT inference put all its time on
transformers' ``utils/generic.py``, the decorator that calls ``forward``).

The library here is a real installed-style package (``site-packages/tinylib``) made for
the test: a decorator in ``utils.py`` and a model in ``model.py``; torch compiles the
decorator's wrapper frame and inlines the model's forward.
"""

from __future__ import annotations

import sys
import textwrap
from pathlib import Path

import pytest
import torch

import compiler

_UTILS = """
import functools


def keeps_outputs(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
"""
_MODEL = """
import torch

from tinylib.utils import keeps_outputs


class Tiny(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.up = torch.nn.Linear(16, 32)

    @keeps_outputs
    def forward(self, x):
        h = torch.nn.functional.gelu(self.up(x))
        return (h * torch.sigmoid(h)).sum(-1)
"""


@pytest.mark.slow
def test_a_librarys_kernels_are_timed_on_its_model_lines_not_its_wrapper(tmp_path: Path):
    import torch._inductor.config as inductor_config

    lib = tmp_path / "site-packages" / "tinylib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text("")
    (lib / "utils.py").write_text(textwrap.dedent(_UTILS))
    (lib / "model.py").write_text(textwrap.dedent(_MODEL))
    sys.path.insert(0, str(lib.parent))
    try:
        from tinylib.model import Tiny

        torch.manual_seed(0)
        model, x = Tiny().eval(), torch.randn(8, 16)
        compiled = torch.compile(model.forward)
        trace = tmp_path / "trace.json"

        def run() -> None:
            with torch.no_grad(), inductor_config.patch({"cpp.enable_kernel_profile": True}):
                compiled(x)
                with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as p:
                    compiled(x)
            p.export_chrome_trace(str(trace))

        exp = compiler.explore(run, wrap=False)
    finally:
        sys.path.remove(str(lib.parent))
        for name in [m for m in sys.modules if m.startswith("tinylib")]:
            del sys.modules[name]
    # torch's record: the compiled frame is the decorator's wrapper in utils.py
    assert {Path(c.filename).name for c in exp.compiles if c.filename} == {"utils.py"}
    profile = compiler.attach_profile(exp, trace).profile
    assert profile is not None and profile.kernels
    files = {Path(pl.loc.filename).name for pl in profile.lines if pl.loc}
    assert files == {"model.py"}, files

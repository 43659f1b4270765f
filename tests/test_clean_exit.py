"""A capture leaves nothing to print at interpreter exit.

IPython's exit clears the user namespace before the Exploration there lets go of the
transformed code it keeps; Dynamo's clean-up of that code's globals then found them gone
and printed ``KeyError: '__builtins_dict___N'`` (``compiler/_compat/dynamo_globals.py``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

SESSION = """
from IPython.testing.globalipapp import start_ipython
ip = start_ipython()
ip.run_cell("import torch, compiler")
ip.run_cell("def f(x):\\n    return torch.sin(x) + len(str(x.shape))\\n")
assert ip.run_cell("exp = compiler.explore(f, torch.randn(4), backend='aot_eager')").success
print("captured", len(ip.user_ns["exp"].compiles))
"""


def test_an_ipython_session_that_captured_exits_without_a_keyerror():
    pytest.importorskip("IPython")
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-c", SESSION], capture_output=True, text=True, env=env, timeout=300,
        check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "captured 1" in done.stdout
    assert "KeyError" not in done.stderr and "Exception ignored" not in done.stderr, (
        done.stderr[-3000:]
    )

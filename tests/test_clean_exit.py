"""A capture leaves nothing to print at interpreter exit, nor a docstring example at its end.

IPython's exit clears the user namespace before the Exploration there lets go of the
transformed code it keeps; doctest clears an example's namespace before the reset after it
lets go of the code compiled there. Dynamo's clean-up of that code's globals then found them
gone and printed ``KeyError: '__builtins_dict___N'`` (``compiler/_compat/dynamo_globals.py``).
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


def test_docstring_examples_that_compile_print_no_keyerror_at_their_end_or_at_exit():
    # check() compiles a function with a graph break in the example's namespace, and the
    # capture example keeps an Exploration there: both printed the KeyError under pytest
    examples = ["compiler/decompile/verify.py", "compiler/_compat/dynamo_globals.py"]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *examples,
         "-W", "error::pytest.PytestUnraisableExceptionWarning"],
        cwd=ROOT, capture_output=True, text=True, env=env, timeout=300, check=False,
    )  # fmt: skip
    said = done.stdout + done.stderr
    assert done.returncode == 0, said[-3000:]
    assert "3 passed" in said, said[-3000:]
    assert "KeyError" not in said and "Exception ignored" not in said, said[-3000:]

"""Which torch this is, and the oldest one the explorer's hooks are checked on."""

from __future__ import annotations

import re

import torch

# The oldest torch the tests cover: the GPU machine's 2.11 (CUDA, Python 3.12); CI runs
# the suite on 2.13 (CPU) and a smoke set on 2.14.1. pyproject.toml's lower bound.
OLDEST_TORCH = (2, 11)


def torch_release(version: str | None = None) -> tuple[int, int]:
    """(major, minor) of ``torch.__version__`` or of ``version``.

    Example:
        >>> torch_release("2.14.1+cu130"), torch_release("2.16.0.dev20261101")
        ((2, 14), (2, 16))
    """
    found = re.match(r"(\d+)\.(\d+)", version or str(torch.__version__))
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def require_supported_torch(version: str | None = None) -> None:
    """Raise ImportError with what to do when torch is older than the tests cover: the
    private hooks this module uses (the bytecode hook, the structured trace's records,
    Inductor's artifact loggers) differ before it."""
    if torch_release(version) < OLDEST_TORCH:
        oldest = ".".join(map(str, OLDEST_TORCH))
        msg = (
            f"torch-compile-explorer needs torch {oldest} or newer, and this is torch "
            f"{version or torch.__version__}: the compiler hooks it reads changed before "
            f"{oldest}. Upgrade torch (pip install 'torch>={oldest}') and restart the kernel."
        )
        raise ImportError(msg)


def torch_version() -> str:
    """``torch.__version__`` as a string."""
    return str(torch.__version__)

"""Whether torch's profiler is recording now."""

from __future__ import annotations


def profiler_running() -> bool:
    """Whether a ``torch.profiler`` (or autograd profiler) is recording now: a second one
    cannot start inside it (``torch.autograd._profiler_enabled``, torch 2.11/2.13).

    >>> profiler_running()
    False
    """
    import torch

    return bool(torch.autograd._profiler_enabled())  # type: ignore[attr-defined]

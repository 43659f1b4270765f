"""The whole target in float64, for the end-to-end verdict's reference: the floating
tensors the target reaches cast to float64 in place for one eager rerun, and put back
exactly after."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from compiler.capture.state import Snapshot
from compiler.numerics.reference import without_autocast


@contextlib.contextmanager
def in_float64(saved: Snapshot) -> Iterator[int]:
    """Inside the block, every floating tensor ``saved`` reached (parameters, buffers, the
    inputs, tensors the code names), their gradients and the optimizers' floating state are
    float64, torch's default dtype is float64 (tensors the target makes itself follow) and
    autocast is off; yields how many tensors were cast. The tensors stay the user's objects:
    their ``.data`` is swapped (as ``nn.Module.to`` once did), so modules, optimizers and
    closures see float64 without being rebuilt. On exit each gets back its own data (the
    same storage, dtype, sizes and strides), its own gradient object and optimizer entry,
    and the default dtype; the values the rerun wrote are the caller's to put back
    (``Snapshot.restore``). What the snapshot does not reach stays as it is, so a target
    that mixes it in may fail in float64 (the caller then says so) or compute part of its
    reference in its own dtype; tensors sharing storage are cast apart, each on its own.

    Example:
        >>> import torch
        >>> from compiler.capture.state import snapshot
        >>> m = torch.nn.Linear(2, 1)
        >>> weight = m.weight
        >>> with in_float64(snapshot(m)) as cast:
        ...     cast, m(torch.ones(1, 2)).dtype
        (2, torch.float64)
        >>> m.weight is weight, m.weight.dtype
        (True, torch.float32)
    """
    import torch

    swapped: list[tuple[Any, Any, Any]] = []
    entries: list[tuple[dict[str, Any], str, Any]] = []
    default = torch.get_default_dtype()
    try:
        with torch.no_grad():
            for tensor, _ in saved.tensors:
                if not tensor.is_floating_point() or tensor.dtype == torch.float64:
                    continue
                grad = tensor.grad if tensor.is_leaf else None
                swapped.append((tensor, tensor.data, grad))
                if tensor.is_leaf:
                    tensor.grad = None  # a gradient's dtype must match its tensor's
                tensor.data = tensor.data.to(torch.float64)
                if grad is not None:
                    tensor.grad = grad.detach().to(torch.float64)
            for optimizer, _, _ in saved.optimizers:
                for state in optimizer.state.values():
                    for key, value in list(state.items()):
                        if (isinstance(value, torch.Tensor) and value.is_floating_point()
                                and value.dtype != torch.float64):  # fmt: skip
                            entries.append((state, key, value))
                            state[key] = value.to(torch.float64)
        torch.set_default_dtype(torch.float64)
        with without_autocast():
            yield len(swapped)
    finally:
        torch.set_default_dtype(default)
        for state, key, value in reversed(entries):
            state[key] = value
        with torch.no_grad():
            for tensor, data, grad in reversed(swapped):
                if tensor.is_leaf:
                    tensor.grad = None
                tensor.data = data
                if tensor.is_leaf:
                    tensor.grad = grad

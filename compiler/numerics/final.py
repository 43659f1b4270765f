"""The whole target, end to end: what the compiled run returned and the gradients it left
on the parameters, against an eager rerun of the target from the same state, inputs and
RNG state, and against a float64 rerun of it where one runs (``Numerics.end_to_end``)."""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable
from typing import Any

from compiler._compat import numerics as torch_numerics
from compiler.capture.state import Snapshot
from compiler.model.numerics import FinalNumerics, Measured
from compiler.numerics.float64 import in_float64
from compiler.numerics.measure import figures, measure


@dataclasses.dataclass(frozen=True)
class Finals:
    """What one run of the target produced, copied: its returned leaves by name and each
    parameter's gradient the run left (by ``Snapshot.parameters``' name)."""

    outputs: dict[str, Any]
    gradients: dict[str, Any]


def _copy(value: Any) -> Any:
    import torch

    return value.detach().clone() if isinstance(value, torch.Tensor) else value


def finals(returned: Any, saved: Snapshot) -> Finals:
    """Copies of what ``returned`` holds and of the gradients the run left: a gradient
    counts where the parameter had none before the run or the run changed it (a gradient
    the user had and the run left alone says nothing about it).

    Example:
        >>> import torch
        >>> from compiler.capture.state import snapshot
        >>> m = torch.nn.Linear(2, 1)
        >>> saved = snapshot(m)
        >>> m(torch.ones(1, 2)).sum().backward()
        >>> sorted(finals(1.0, saved).gradients)
        ['Linear.bias', 'Linear.weight']
    """
    import torch

    before = {id(p): g for p, g in saved.grads}
    grads: dict[str, Any] = {}
    for name, param in _unique(saved.parameters):
        grad, had = param.grad, before.get(id(param))
        if grad is None or (isinstance(had, torch.Tensor) and torch.equal(had, grad)):
            continue
        grads.setdefault(name, _copy(grad))
    leaves = torch_numerics.named_leaves(returned)
    return Finals(outputs={n: _copy(v) for n, v in leaves if v is not None}, gradients=grads)


def _unique(named: list[tuple[str, Any]]) -> list[tuple[str, Any]]:
    seen: set[int] = set()
    out = []
    for name, param in named:
        if id(param) not in seen:
            seen.add(id(param))
            out.append((name, param))
    return out


def eager_rerun(
    target: Callable[..., Any], inputs: tuple[Any, ...], saved: Snapshot, *, float64: bool = False
) -> Finals:
    """Put the state back to where the compiled run started (``saved``: parameters,
    gradients, optimizer state, RNG) and run ``target(*inputs)`` eagerly, compiled code it
    calls itself included (``torch.compiler.set_stance("force_eager")``); with ``float64``
    the floating tensors the target reaches are float64 for the run (``in_float64``; put
    back after, the results copied before). The caller restores the state again after."""
    import torch

    saved.restore()
    with contextlib.ExitStack() as stack:
        if float64:
            stack.enter_context(in_float64(saved))
        stack.enter_context(torch.compiler.set_stance("force_eager"))
        return finals(target(*inputs), saved)


def compare_finals(
    compiled: Finals, eager: Finals, tol: float, eager64: Finals | None = None
) -> tuple[FinalNumerics, ...]:
    """Each output and gradient of the compiled run against the eager rerun's, outputs
    first, in the order the runs produced them; with ``eager64`` (the float64 rerun) the
    verdict is torch's ``same()`` against float64, as for a node, else its allclose.

    Example:
        >>> import torch
        >>> a = Finals(outputs={"result": torch.ones(3)}, gradients={})
        >>> b = Finals(outputs={"result": torch.ones(3) + 1}, gradients={})
        >>> [(f.name, f.within) for f in compare_finals(a, b, 1e-3)]
        [('result', False)]
    """
    rows: list[FinalNumerics] = []
    fp64 = eager64 or Finals(outputs={}, gradients={})
    for kind, mine, theirs, ref64 in (
        ("output", compiled.outputs, eager.outputs, fp64.outputs),
        ("gradient", compiled.gradients, eager.gradients, fp64.gradients),
    ):
        for name in dict.fromkeys([*mine, *theirs]):
            if name not in theirs:
                found = Measured(reason=f"only the compiled run has this {kind}")
            elif name not in mine:
                found = Measured(reason=f"only the eager rerun has this {kind}")
            else:
                found = measure(mine[name], theirs[name], ref64.get(name), tol)
            rows.append(FinalNumerics(**figures(found), kind=kind, name=name,
                                      compared=not found.reason))  # fmt: skip
    return tuple(rows)

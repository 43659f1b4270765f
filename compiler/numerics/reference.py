"""Eager references for one compiled graph call: the post-grad graph run node by node
with ``torch.fx.Interpreter`` on the inputs the compiled code was given, once in the
graph's own dtypes and once in float64 (the minifier's ``cast_to_fp64``: floating inputs,
constants and every floating ``dtype`` argument become float64), with autocast off (the
graph already holds its casts)."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from typing import Any


@dataclass
class Reference:
    """Each node's eager value (``values``) and float64 value (``fp64``), by node name;
    ``error`` and ``fp64_error`` say where a run stopped (its values up to there kept)."""

    values: dict[str, Any] = field(default_factory=dict)
    fp64: dict[str, Any] = field(default_factory=dict)
    error: str = ""
    fp64_error: str = ""


def _to64(value: Any) -> Any:
    import torch

    if isinstance(value, torch.Tensor) and value.is_floating_point():
        return value.detach().to(torch.float64)
    if isinstance(value, (list, tuple)):
        return type(value)(_to64(v) for v in value)
    return value


def _interpreter(module: Any, fp64: bool, keep: dict[str, Any]) -> Any:
    import torch

    class Keeping(torch.fx.Interpreter):
        node = ""  # the node running: where a failed run stopped

        def run_node(self, n: torch.fx.Node) -> Any:
            self.node = n.name
            value = super().run_node(n)
            keep[n.name] = value
            return value

        def call_function(self, target: Any, args: Any, kwargs: Any) -> Any:
            if fp64:
                args, kwargs = _fp64_arguments(target, args, kwargs)
            return super().call_function(target, args, kwargs)

        def get_attr(self, target: Any, args: Any, kwargs: Any) -> Any:
            value = super().get_attr(target, args, kwargs)
            return _to64(value) if fp64 else value

    return Keeping(module, garbage_collect_values=False)


def _stopped(exc: Exception, node: str) -> str:
    """Why a reference run stopped, and where: the node and the innermost frame (torch's
    op, or this package's own code), so a note tells a torch limit from a bug of ours."""
    import traceback

    first = str(exc).splitlines()[0] if str(exc) else ""
    frames = traceback.extract_tb(exc.__traceback__)
    place = f", {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    return f"{type(exc).__name__}: {first} (at node `{node}`{place})"


def _fp64_arguments(target: Any, args: Any, kwargs: Any) -> tuple[Any, Any]:
    # torch._dynamo.debug_utils.cast_dtype_args_to_fp64, applied per call instead of
    # rewriting the graph (the post-grad graph is Inductor's and stays as it is)
    import torch

    def floating(d: Any) -> bool:
        return isinstance(d, torch.dtype) and d.is_floating_point and d != torch.float64

    if target is torch.ops.prims.convert_element_type.default and floating(args[1]):
        args = (args[0], torch.float64)
    if floating(kwargs.get("dtype")):
        kwargs = {**kwargs, "dtype": torch.float64}
    return args, kwargs


def without_autocast() -> contextlib.ExitStack:
    """Autocast off on the CPU and CUDA: the post-grad graph spells out every cast autocast
    made while it was traced, and where ``numerics`` is called inside ``torch.autocast``
    the ambient autocast would cast the graph's float32 ops (a region the user kept in
    float32) to low precision again, and the float64 reference's ops with them."""
    import torch

    stack = contextlib.ExitStack()
    for device in ("cpu", "cuda") if torch.cuda.is_available() else ("cpu",):
        stack.enter_context(torch.autocast(device, enabled=False))
    return stack


def run_reference(module: Any, inputs: list[Any], rng: Any) -> Reference:
    """Run ``module`` (a post-grad graph) on copies of ``inputs`` from RNG state ``rng``
    (``compiler._compat.numerics.rng_state``: CPU, CUDA or None),
    in its own dtypes and in float64; the process's RNG state is put back after.

    Example:
        >>> import torch
        >>> gm = torch.fx.symbolic_trace(lambda x: torch.relu(x) + 1)
        >>> ref = run_reference(gm, [torch.tensor([-1.0, 2.0])], (torch.get_rng_state(), None))
        >>> ref.values["add"].tolist(), ref.fp64["add"].dtype
        ([1.0, 3.0], torch.float64)
    """
    import torch

    from compiler._compat.numerics import rng_state, set_rng_state

    found = Reference()
    saved = rng_state()
    try:
        for fp64 in (False, True):
            keep = found.fp64 if fp64 else found.values
            args = [_to64(a) if fp64 else a for a in inputs]
            args = [a.clone() if isinstance(a, torch.Tensor) else a for a in args]
            set_rng_state(rng)
            interpreter = _interpreter(module, fp64, keep)
            try:
                with torch.no_grad(), without_autocast():
                    interpreter.run(*args)
            except Exception as exc:
                message = _stopped(exc, interpreter.node)
                if fp64:
                    found.fp64_error = message
                else:
                    found.error = message
    finally:
        set_rng_state(saved)
    return found

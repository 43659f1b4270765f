"""How a ``Fix`` changes a compile: a Dynamo config patch, a grad mode around the call,
or other ``torch.compile`` arguments.

Every change is undone when the block ends, so the user's settings are as they were.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import importlib
from collections.abc import Iterator
from typing import Any

from compiler import _compat
from compiler.capture.spec import CompileSpec
from compiler.model import Fix

# the Dynamo settings that are sets of functions: a fix adds one function to them
_FUNCTION_SETS = ("ignore_logging_functions", "reorderable_logging_functions")
_VALUES = {"True": True, "False": False}


def resolve(dotted: str) -> Any:
    """The object a dotted name such as ``logging.Logger.warning_once`` or ``print`` names.

    Example:
        >>> resolve("logging.Logger.warning").__name__
        'warning'
    """
    parts = dotted.split(".")
    if len(parts) == 1:
        return getattr(builtins, dotted)
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for name in parts[cut:]:
            obj = getattr(obj, name)
        return obj
    raise ImportError(f"cannot import {dotted!r}")


def compile_args(fix: Fix, spec: CompileSpec) -> CompileSpec:
    """``spec`` with what ``fix`` changes in the ``torch.compile`` call itself (another
    backend drops Inductor's mode and options).

    Example:
        >>> compile_args(Fix(kind="dynamic"), CompileSpec()).dynamic
        True
    """
    if fix.kind == "dynamic":
        return dataclasses.replace(spec, dynamic=True)
    if fix.kind == "backend":
        return dataclasses.replace(spec, backend=fix.value, mode=None, options={})
    return spec


@contextlib.contextmanager
def applied(fix: Fix, *, wrapped: bool) -> Iterator[None]:
    """The part of ``fix`` that is not a ``torch.compile`` argument, for one block.

    ``wrapped``: whether the explorer compiles the target itself; a target that calls
    torch.compile on its own gets ``dynamic`` as Dynamo's ``assume_static_by_default``.

    Example:
        >>> import torch
        >>> with applied(Fix(kind="no_grad"), wrapped=True):
        ...     torch.is_grad_enabled()
        False
    """
    import torch

    with contextlib.ExitStack() as stack:
        if fix.kind == "no_grad":
            stack.enter_context(torch.no_grad())
        elif fix.kind == "inference_mode":
            stack.enter_context(torch.inference_mode())
        elif fix.kind == "dynamic" and not wrapped:
            stack.enter_context(_compat.patched_dynamo_config({"assume_static_by_default": False}))
        elif fix.kind == "dynamo_config":
            value: Any
            if fix.name in _FUNCTION_SETS:
                value = {*_compat.dynamo_config_value(fix.name), resolve(fix.value)}
            else:
                value = _VALUES.get(fix.value, fix.value)
            name = _compat.dynamo_config_name(fix.name)
            stack.enter_context(_compat.patched_dynamo_config({name: value}))
        yield

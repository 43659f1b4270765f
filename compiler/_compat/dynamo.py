"""Dynamo's frames as it converts them (compile ids, the bytecode hook, what it converted,
where it is tracing), its errors and graph-break registry, and its counters.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from types import CodeType
from typing import Any

from compiler import _torch_files


def current_compile_id() -> tuple[int | None, int | None, int, int | None] | None:
    """(frame_id, frame_compile_id, attempt, compiled_autograd_id) of the compile now
    running, or None outside a compile (``torch._guards.CompileContext``, 2.11/2.13)."""
    from torch._guards import CompileContext

    trace_id = CompileContext.current_trace_id()
    if trace_id is None:
        return None
    cid = trace_id.compile_id
    return (cid.frame_id, cid.frame_compile_id, trace_id.attempt, cid.compiled_autograd_id)


def register_bytecode_hook(hook: Callable[[CodeType, CodeType], CodeType | None]) -> Any:
    """Call ``hook(original, transformed)`` for every frame Dynamo converts; returns a
    handle with ``.remove()`` (``torch._dynamo.convert_frame.register_bytecode_hook``,
    2.11/2.13). The hook must return None so the transformed code is kept."""
    from torch._dynamo.convert_frame import register_bytecode_hook as register

    return register(hook)  # type: ignore[arg-type]  # BytecodeHook is a Protocol of this shape


def is_compiled(obj: object) -> bool:
    """Whether ``obj`` is already the result of ``torch.compile`` (module or function)."""
    from torch._dynamo.eval_frame import OptimizedModule

    if isinstance(obj, OptimizedModule):
        return True
    # torch.compiler.disable wraps a function the same way (torch 2.13 sets
    # _torchdynamo_orig_callable on both), but runs it eagerly: not compiled code.
    if getattr(obj, "_torchdynamo_disable", False):
        return False
    return hasattr(obj, "_torchdynamo_orig_callable")


def is_graph_break_error(exc: BaseException) -> bool:
    """Whether ``exc`` is Dynamo refusing to trace something (``torch._dynamo.exc.Unsupported``)."""
    from torch._dynamo.exc import Unsupported

    return isinstance(exc, Unsupported)


def is_backend_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a backend compiler failing (``BackendCompilerFailed``)."""
    from torch._dynamo.exc import BackendCompilerFailed

    return isinstance(exc, BackendCompilerFailed)


def is_dynamo_error(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by torch.compile's machinery rather than user code."""
    from torch._dynamo.exc import TorchDynamoException

    return isinstance(exc, TorchDynamoException)


def is_constraint_violation(exc: BaseException) -> bool:
    """Whether ``exc`` says a dimension marked dynamic was specialised by the code."""
    try:
        from torch.fx.experimental.symbolic_shapes import ConstraintViolationError
    except ImportError:  # moved or renamed: such failures fall back to the generic class
        return False
    return isinstance(exc, ConstraintViolationError)


@functools.cache
def graph_break_registry() -> dict[str, tuple[dict[str, Any], ...]]:
    """The graph-break registry: id (``GB0025``) -> its entries, the current one first,
    then the wordings it had before (``Gb_type``, ``Context``, ``Explanation``,
    ``Hints``), each with ``Link``, its page as ``torch._dynamo.exc.get_gbid_documentation_link``
    builds it ("" where torch has none).

    Read as a file without importing torch (``compiler._torch_files``, so the trace path
    runs where torch is absent): the installed torch's
    ``torch/_dynamo/graph_break_registry.json`` (torch 2.13: 517 ids, 2.14.1: 561), else
    the copy this package ships. Read once per process.

    Example:
        >>> graph_break_registry()["GB0025"][0]["Gb_type"]
        'Call to `torch._dynamo.graph_break()`'
    """
    return _torch_files.graph_break_registry()


def traced_line(frame: Any, filename: str) -> int | None:
    """The line of ``filename`` that Dynamo is tracing in ``frame``, if ``frame`` is one of
    its instruction translators' methods (their ``self`` has ``f_code`` and ``lineno``):
    where a compile that hangs is, when the user's code is being traced, not run."""
    tx = frame.f_locals.get("self")
    code = getattr(tx, "f_code", None)
    if isinstance(code, CodeType) and code.co_filename == filename:
        line = getattr(tx, "lineno", None)
        return line if isinstance(line, int) else None
    return None


def counters_snapshot() -> dict[str, int]:
    """Dynamo's and Inductor's event counters, flattened to ``group.name``
    (``torch._dynamo.utils.counters``, torch 2.11/2.13): graph breaks, unique graphs,
    cudagraph partitions and skips, cache hits, ..."""
    from torch._dynamo.utils import counters

    return {
        f"{group}.{name}": int(value)
        for group, values in counters.items()
        for name, value in values.items()
        if isinstance(value, int)
    }


def converted_codes() -> list[Any]:
    """The live code objects Dynamo has converted in this process
    (``convert_frame.input_codes``, 2.11-2.14): a reset empties it, so a code held from
    before and missing afterwards says that something reset Dynamo (strict
    ``torch.export`` does, 2.13: ``torch/_dynamo/functional_export.py``)."""
    from torch._dynamo import convert_frame

    return [c for ref in list(convert_frame.input_codes.seen) if (c := ref()) is not None]

"""Dynamo's frames as it converts them (compile ids, the bytecode hook, what it converted,
where it is tracing), the sources of the guards it builds, its errors and graph-break
registry, and its counters.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable
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


# The sources of Dynamo's guards in a live capture.
#
# The sources of Dynamo's guards in a live capture, read from the ``Source`` objects
# Dynamo built (``torch._guards.Guard.originating_source``, ``torch._dynamo.source``), not
# from how a torch version prints them.
#
# A cause is keyed on the path a guard reads (``self.param_groups[0]['lr']``). torch 2.11
# prints that guard inside ``___as_tensor(...).item()``, 2.13 bare; the ``Source`` chain is
# the same structure on both: an attribute, an item and a dict item above a local. The path
# is spelt as ``compiler.parse.guards.sources.source_name`` spells a printed source, so a
# live capture and a trace of the same program give the same key.
#
# Dynamo hands a compile's guards to ``Hooks.guard_export_fn`` once they are built (each
# ``Guard`` then carries the code it checks, ``code_list``); ``export_hook`` chains a reader
# in front of the user's hook there (``code_cache.own_compiles`` installs it).

# Sources that only convert, wrap or mark the value of the one below (``base``): the path
# is the base's. Named by class: each exists on 2.11, 2.13 and 2.14.1 (``torch._dynamo.
# source``), and a class a torch lacks or adds is simply not in this set.
_TRANSPARENT = frozenset({
    "NNModuleSource", "UnspecializedNNModuleSource", "UnspecializedBuiltinNNModuleSource",
    "FSDPNNModuleSource", "OptimizerSource", "FloatTensorSource", "CallMethodItemSource",
    "ConvertIntSource", "NumpyTensorSource", "SkipGuardSource", "DynamicScalarSource",
})  # fmt: skip
# Sources that read an item of the one below: ``base[index]``
_ITEM = frozenset({
    "GetItemSource", "ListGetItemSource", "TupleIteratorGetItemSource", "DictGetItemSource",
    "DictSubclassGetItemSource",
})  # fmt: skip
_ATTR = frozenset({"AttrSource", "ParamBufferSource", "UnspecializedParamBufferSource",
                   "GenericAttrSource"})  # fmt: skip
_ROOT = {"LocalSource": "local_name", "GlobalSource": "global_name",
         "GlobalWeakRefSource": "global_name"}  # fmt: skip


def source_path(source: Any) -> str | None:
    """The path a Dynamo ``Source`` reads, walking its ``base`` chain: a frame's local or
    global (``LocalSource``, ``GlobalSource``), attributes (``AttrSource``), items
    (``GetItemSource``, ``DictGetItemSource``) and the wrappers that only convert what
    they read (``FloatTensorSource``, ``CallMethodItemSource``, module and optimizer
    sources). None for a source of any other kind (the caller then reads the printed
    guard).

    Example:
        >>> from torch._dynamo.source import AttrSource, DictGetItemSource, GetItemSource
        >>> from torch._dynamo.source import LocalSource
        >>> groups = AttrSource(LocalSource("self"), "param_groups")
        >>> source_path(DictGetItemSource(GetItemSource(groups, 0), "lr"))
        "self.param_groups[0]['lr']"
    """
    parts: list[str] = []
    for _ in range(64):  # a chain is short; a cycle is no source we know
        kind = type(source).__name__
        if kind in _ROOT:
            name = getattr(source, _ROOT[kind], None)
            return name + "".join(reversed(parts)) if isinstance(name, str) else None
        base = getattr(source, "base", None)
        if base is None:
            return None
        if kind in _ATTR:
            member = getattr(source, "member", None)
            if not isinstance(member, str):
                return None
            parts.append(f".{member}")
        elif kind in _ITEM:
            index = getattr(source, "index", None)
            if getattr(source, "index_is_slice", False) or not isinstance(
                index, (int, str, float, bool)
            ):
                return None  # a slice or a key that is itself a source
            parts.append(f"[{index!r}]")
        elif kind not in _TRANSPARENT:
            return None
        source = base
    return None


@dataclasses.dataclass(frozen=True, slots=True)
class GuardSource:
    """One guard Dynamo built: the texts torch prints for it (its checks, ``code_list``,
    and its source's printed name) and the path its ``Source`` reads (``source_path``)."""

    texts: tuple[str, ...]
    path: str


def guard_sources(guards: Iterable[Any]) -> list[GuardSource]:
    """What ``source_path`` reads for each of a compile's guards that has a source it knows
    (``guards``: the ``GuardsSet`` Dynamo hands to ``guard_export_fn``)."""
    out = []
    for guard in guards:
        source = getattr(guard, "originating_source", None)
        path = source_path(source) if source is not None else None
        if not path:
            continue
        name = getattr(source, "name", "")
        name = name() if callable(name) else name  # a method before 2.13, a property after
        texts = (*(getattr(guard, "code_list", None) or ()), *([name] if name else []))
        out.append(GuardSource(tuple(str(t) for t in texts), path))
    return out


def export_hook(hooks: Any, sink: Callable[[list[GuardSource]], None],
                failed: Callable[[Exception], None]) -> Any:  # fmt: skip
    """``hooks`` (Dynamo's ``Hooks`` of a compiled call) with a ``guard_export_fn`` that
    gives ``sink`` each compile's guard sources, then calls the user's own hook if there
    was one. Reading never fails the compile: a failure of the reader goes to ``failed``
    and the reasons of that compile keep their printed keys."""
    theirs = getattr(hooks, "guard_export_fn", None)

    def export(guards: Any) -> None:
        try:
            sink(guard_sources(guards))
        except Exception as exc:  # observing must not fail the user's compile
            failed(exc)
        if theirs is not None:
            theirs(guards)

    try:
        return dataclasses.replace(hooks, guard_export_fn=export)
    except Exception:
        return hooks

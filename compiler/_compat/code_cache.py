"""Dynamo's per-code cache: what capture compiles beside the user's compiles, and how it
drops only its own entries afterwards (torch internals, like the rest of ``compiler._compat``).
"""

from __future__ import annotations

import weakref
from collections.abc import Callable
from types import CodeType
from typing import Any

import torch

# --- Dynamo's per-code cache: what capture compiles beside the user's compiles -------------


def fresh_backend(backend: str | Callable[..., Any], mode: str | None,
                  options: dict[str, Any] | None, dynamic: bool | None) -> Callable[..., Any]:
    """A backend equal to no other: Dynamo serves a frame from any cache entry whose backend
    compares equal (Inductor's wrapper compares settings), so with the user's backend a
    capture would record nothing. Inductor's ``mode``/``options`` go in its wrapper."""
    import functools

    if backend == "inductor":
        # torch names a callable backend by its __name__ (``compiler_name``)
        own = {"__eq__": object.__eq__, "__hash__": object.__hash__, "__name__": "inductor"}
        wrapper = type("_CaptureInductor", (torch._TorchCompileInductorWrapper,), own)
        return wrapper(mode, options, dynamic)  # type: ignore[no-any-return]
    found = torch._dynamo.lookup_backend(backend) if isinstance(backend, str) else backend
    fresh: Any = functools.partial(found)  # a new partial compares by identity
    fresh.__name__ = getattr(found, "__name__", str(backend))
    return fresh  # type: ignore[no-any-return]


def compile_isolation() -> dict[str, Any]:
    """``isolate_recompiles=True`` where ``torch.compile`` takes it (2.13+)."""
    import inspect

    known = inspect.signature(torch.compile).parameters
    return {"isolate_recompiles": True} if "isolate_recompiles" in known else {}


def _drop_entries(codes: list[CodeType], matches: Callable[[Any], bool]) -> int:
    """Invalidate the entries of ``codes`` and their resume functions whose backend
    ``matches``, as Dynamo does when a guarded object dies. Returns how many."""
    from torch._C._dynamo.eval_frame import _debug_get_cache_entry_list
    from torch._dynamo.guards import DeletedGuardManagerWrapper
    from torch._dynamo.resume_execution import ContinueExecutionCache

    pending, done, dropped = list(codes), set(), 0
    while pending:
        code = pending.pop()
        if id(code) in done:
            continue
        done.add(id(code))
        for entry in _debug_get_cache_entry_list(code):
            manager, held = entry.guard_manager, entry.backend
            state = getattr(manager, "extra_state", None)
            if state is None or isinstance(manager, DeletedGuardManagerWrapper):
                continue
            # torch wraps a callable backend: the entry holds the wrapper
            if matches(held) or matches(getattr(held, "compiler_fn", held)):
                dead = DeletedGuardManagerWrapper("dropped by the explorer")
                # a dead entry counts towards the recompile limit where its ID_MATCH objects
                # match the frame's: a name no frame has (and a referent that lives) opts out
                dead.id_matched_objs = {"<dropped>": weakref.ref(_drop_entries)}
                state.invalidate(entry, dead)
                dropped += 1
        pending.extend(ContinueExecutionCache.cache.get(code, {}).values())
    return dropped


def evict_backend(backend: object) -> int:
    """Drop the entries compiled with ``backend`` (by identity) in every code Dynamo saw."""
    from torch._dynamo import convert_frame

    codes = [c for ref in list(convert_frame.input_codes.seen) if (c := ref()) is not None]
    return 0 if backend is None else _drop_entries(codes, lambda b: b is backend)


def evict_compiled(compiled: object) -> tuple[str, int]:
    """Drop a ``torch.compile`` result's cache entries (its code's and resume functions',
    with a backend equal to its own): its next call compiles again. Compiled modules share
    one code (``wrap_inline``'s ``inner``): modules with an equal backend lose theirs too."""
    from torch._dynamo import eval_frame

    _TorchDynamoContext = eval_frame._TorchDynamoContext
    innermost_backend = getattr(eval_frame, "innermost_backend", lambda b: b)  # 2.13+
    wrapper = compiled.forward if isinstance(compiled, torch.nn.Module) else compiled
    original = getattr(wrapper, "_torchdynamo_orig_callable", None)
    code = getattr(getattr(original, "__func__", original), "__code__", None)
    cells = [c.cell_contents for c in getattr(wrapper, "__closure__", None) or ()]
    ctx = next((c for c in cells if isinstance(c, _TorchDynamoContext)), None)
    if not isinstance(code, CodeType) or ctx is None or not callable(ctx.callback):
        return "", 0
    backend = innermost_backend(ctx.callback)
    name = getattr(original, "__qualname__", code.co_name)
    if name.endswith("wrap_inline.<locals>.inner"):
        name = type(getattr(compiled, "_orig_mod", compiled)).__name__

    def same(other: object) -> bool:
        try:
            return other is backend or bool(other == backend)
        except Exception:  # a backend that cannot be compared is not this one
            return False

    return name, _drop_entries([code], same)


def frame_compile_counts() -> dict[int, int]:
    """How many compiles Dynamo has numbered per frame id so far (the ``k`` of ``N/k``)."""
    from torch._dynamo import convert_frame

    return {k: v for k, v in convert_frame.FRAME_COMPILE_COUNTER.items() if isinstance(k, int)}

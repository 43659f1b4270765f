"""Dynamo's per-code cache: what capture compiles beside the user's compiles, and how it
drops only its own entries afterwards (torch internals, like the rest of ``compiler._compat``).
"""

from __future__ import annotations

import contextlib
import functools
import weakref
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

import torch

from compiler._compat.dynamo import GuardSource, export_hook

# Every private name of torch this module reads, as (module, name, since): ``since`` is the
# first torch release that has it where the module does without it on older ones, None
# where it is needed (checked on 2.11 CUDA, 2.13 CPU and 2.14.1). tests/test_code_cache.py
# checks each on the installed torch; ``lacking`` names the needed ones a torch lacks, and
# ``own_compiles`` then switches nothing and says so (``OwnCompiles.lacking``). Read through
# ``_private``, never imported unguarded.
PRIVATE_NAMES: tuple[tuple[str, str, tuple[int, int] | None], ...] = (
    ("torch", "_TorchCompileInductorWrapper", None),
    ("torch._dynamo", "lookup_backend", None),
    ("torch._C._dynamo.eval_frame", "_debug_get_cache_entry_list", None),
    ("torch._C._dynamo.eval_frame", "set_code_exec_strategy", None),
    ("torch._C._dynamo.eval_frame", "_FrameAction", None),
    ("torch._C._dynamo.eval_frame", "_FrameExecStrategy", None),
    ("torch._C._dynamo.eval_frame", "get_eval_frame_isolate_recompiles_id", (2, 13)),
    ("torch._C._dynamo.eval_frame", "set_eval_frame_isolate_recompiles_id", (2, 13)),
    ("torch._dynamo.eval_frame", "_callback_from_stance", None),
    ("torch._dynamo.eval_frame", "_TorchDynamoContext", None),
    ("torch._dynamo.eval_frame", "_stance", None),
    ("torch._dynamo.eval_frame", "innermost_backend", (2, 13)),
    ("torch._dynamo.eval_frame", "_next_isolate_recompiles_id", (2, 13)),
    ("torch._dynamo.convert_frame", "input_codes", None),
    ("torch._dynamo.convert_frame", "FRAME_COMPILE_COUNTER", None),
    ("torch._dynamo.convert_frame", "CatchErrorsWrapper", None),
    ("torch._dynamo.convert_frame", "put_code_state", None),
    ("torch._dynamo.guards", "DeletedGuardManagerWrapper", None),
    ("torch._dynamo.resume_execution", "ContinueExecutionCache", None),
    ("torch._dynamo.trace_rules", "check", None),
    ("torch._dynamo.pgo", "_CODE_STATE", None),
    ("torch._dynamo.pgo", "CodeState", None),
    ("torch._dynamo.pgo", "put_code_state", None),
)
# Read on the objects those hand out, not importable: a cache entry's ``guard_manager``
# and ``backend``, its manager's ``extra_state.invalidate(entry, dead)``, a dead manager's
# ``id_matched_objs``, a callback's ``_torchdynamo_orig_backend``, ``hooks`` and
# ``_clone_with_backend``, the ``Hooks`` a callback compiles with (``guard_export_fn``,
# read in ``dynamo.guard_sources``), a compiled function's ``_torchdynamo_orig_callable``, a
# conversion result's ``guarded_code`` and ``apply_to_code``, ``_FrameAction.SKIP``/``DEFAULT``.


def _private(module: str, name: str) -> Any:
    """torch's private ``module.name``, or None where this torch lacks it.

    >>> _private("torch._dynamo.convert_frame", "input_codes") is not None
    True
    >>> _private("torch._dynamo.convert_frame", "no_such_name") is None
    True
    """
    return getattr(_module(module), name, None)


def _module(name: str) -> Any:
    """torch's private module ``name``, or None where this torch lacks it."""
    import importlib

    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def lacking() -> list[str]:
    """The needed private names (``PRIVATE_NAMES``) this torch lacks, as ``module.name``.

    >>> lacking()
    []
    """
    return [
        f"{module}.{name}"
        for module, name, since in PRIVATE_NAMES
        if since is None and not hasattr(_module(module), name)  # some hold None (_CODE_STATE)
    ]


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


_DROPPED = "dropped by the explorer"


def _drop_entries(codes: list[CodeType], matches: Callable[[Any], bool]) -> int:
    """Invalidate the entries of ``codes`` and their resume functions whose backend
    ``matches``, as Dynamo does when a guarded object dies. Returns how many."""
    _debug_get_cache_entry_list = _private(
        "torch._C._dynamo.eval_frame", "_debug_get_cache_entry_list"
    )
    DeletedGuardManagerWrapper = _private("torch._dynamo.guards", "DeletedGuardManagerWrapper")
    ContinueExecutionCache = _private("torch._dynamo.resume_execution", "ContinueExecutionCache")
    if None in (_debug_get_cache_entry_list, DeletedGuardManagerWrapper, ContinueExecutionCache):
        return 0  # a torch without them: nothing can be dropped (OwnCompiles.lacking says so)
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
                dead = DeletedGuardManagerWrapper(_DROPPED)
                # a dead entry counts towards the recompile limit where its ID_MATCH objects
                # match the frame's: a name no frame has (and a referent that lives) opts out
                dead.id_matched_objs = {"<dropped>": weakref.ref(_drop_entries)}
                state.invalidate(entry, dead)
                dropped += 1
        pending.extend(ContinueExecutionCache.cache.get(code, {}).values())
    return dropped


def evict_backend(backend: object) -> int:
    """Drop the entries compiled with ``backend`` (by identity) in every code Dynamo saw."""
    input_codes = _private("torch._dynamo.convert_frame", "input_codes")
    seen = list(getattr(input_codes, "seen", ()))
    codes = [c for ref in seen if (c := ref()) is not None]
    return 0 if backend is None else _drop_entries(codes, lambda b: b is backend)


def evict_compiled(compiled: object) -> tuple[str, int]:
    """Drop a ``torch.compile`` result's cache entries (its code's and resume functions',
    with a backend equal to its own): its next call compiles again. Compiled modules share
    one code (``wrap_inline``'s ``inner``): modules with an equal backend lose theirs too."""
    _TorchDynamoContext = _private("torch._dynamo.eval_frame", "_TorchDynamoContext")
    innermost_backend = (
        _private("torch._dynamo.eval_frame", "innermost_backend") or (lambda b: b)  # 2.13+
    )
    wrapper = compiled.forward if isinstance(compiled, torch.nn.Module) else compiled
    original = getattr(wrapper, "_torchdynamo_orig_callable", None)
    code = getattr(getattr(original, "__func__", original), "__code__", None)
    cells = [c.cell_contents for c in getattr(wrapper, "__closure__", None) or ()]
    ctx = (
        next((c for c in cells if isinstance(c, _TorchDynamoContext)), None)
        if _TorchDynamoContext is not None
        else None
    )
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
    counter = _private("torch._dynamo.convert_frame", "FRAME_COMPILE_COUNTER") or {}
    return {k: v for k, v in counter.items() if isinstance(k, int)}


# --- a capture's own backend for every compiled call, and torch's eager marks --------------


@dataclass
class OwnCompiles:
    """What ``own_compiles`` did: whether torch let it (``active``), the codes whose eager
    mark it lifted for the capture (``unmarked``, by name), how many of its own cache
    entries it dropped afterwards (``dropped``), how many marks the capture's own
    compiles left that it took back (``marks_undone``), the private names this torch
    lacks (``lacking``) and what failed in putting things back (``failed``)."""

    active: bool = False
    unmarked: list[str] = field(default_factory=list)
    dropped: int = 0
    marks_undone: int = 0
    # the needed private names this torch lacks (``lacking``): nothing was switched
    lacking: list[str] = field(default_factory=list)
    # what failed while putting the process back (dropping entries, marks), as sentences
    failed: list[str] = field(default_factory=list)
    # whether the block's compiles sit in a recompile region of their own (torch 2.13+):
    # before, they are recompiles of the user's code and count toward its recompile limit
    own_region: bool = True
    # the block's guards, each text torch prints for one (its checks, its source's name)
    # -> the path its Dynamo ``Source`` reads (``dynamo.guard_sources``); the first guard wins
    guard_paths: dict[str, str] = field(default_factory=dict)


def owns_compiles() -> bool:
    """Whether this torch lets ``own_compiles`` give a block's compiled calls a backend of
    their own (every compiled call installs its callback through one function)."""
    return _private("torch._dynamo.eval_frame", "_callback_from_stance") is not None


def _innermost(callback: object) -> object:
    while hasattr(callback, "_torchdynamo_orig_backend"):
        callback = callback._torchdynamo_orig_backend
    return callback


@contextlib.contextmanager
def own_compiles(unmark: Iterable[CodeType] = ()) -> Iterator[OwnCompiles]:
    """Every compiled call made inside the block compiles with a backend of the block's own,
    whatever ``torch.compile`` result it goes through (one the target names, a module
    compiled in an earlier cell, a second module of the same class), and leaves the user's
    cache entries as they are.

    Dynamo serves a frame from the first cache entry whose backend compares equal to the
    running callback's innermost ``_torchdynamo_orig_backend`` and whose guards pass; each
    compiled call installs its callback through ``eval_frame._callback_from_stance``. Here
    that function hands out, per callback, a wrapper whose innermost backend equals only
    itself: the user's entries never match inside the block (so the run compiles and the
    capture records it, with the user's compiler and settings), and are never touched (so
    they serve every call after the block: nothing compiles again, nothing is rebuilt).
    The block's compiles go in an isolated region of their own (torch 2.13+), so they count
    neither as recompiles of the user's entries nor towards their limit, and see none of
    the sizes the process's calls were made with (``_SeenShapes``). On exit the
    block's entries are dropped (``_drop_entries``; their globals go with their code, each
    compile installs its own), and the frames the block's compiles marked to run eagerly
    (a failed or skipped compile marks its code for every backend) are unmarked again.

    ``unmark``: codes to lift torch's eager mark from for the block (a compile of them
    failed or was skipped earlier: torch then runs them eagerly whatever the backend).
    torch offers no way to read a mark, so a code counts as marked when Dynamo converted
    it (``input_codes``) and it holds no cache entry at all: every conversion then returned
    no code, which (2.13, 2.14) marks the code (SKIP this frame) unless torch's stance is
    not the default one. The mark is put back on exit.
    """
    missing = lacking()
    py_eval_frame = _module("torch._dynamo.eval_frame")
    original = _private("torch._dynamo.eval_frame", "_callback_from_stance")
    state = OwnCompiles(active=original is not None and not missing, lacking=missing)
    if not state.active:
        yield state
        return
    get_region = _private("torch._C._dynamo.eval_frame", "get_eval_frame_isolate_recompiles_id")
    set_region = _private("torch._C._dynamo.eval_frame", "set_eval_frame_isolate_recompiles_id")
    regions = _private("torch._dynamo.eval_frame", "_next_isolate_recompiles_id")
    region = next(regions) if get_region and set_region and regions is not None else None
    state.own_region = region is not None
    prior_region = get_region() if get_region is not None else None
    made: dict[int, tuple[object, Callable[..., Any]]] = {}

    def read_guards(read: list[GuardSource]) -> None:
        for guard in read:
            for text in guard.texts:
                state.guard_paths.setdefault(text, guard.path)

    def read_failed(exc: Exception) -> None:
        if len(state.failed) < 8:
            state.failed.append(f"reading a compile's guard sources failed: {exc!r}")

    sentinels: list[tuple[object, object]] = []  # (the user's backend, the block's own)
    touched: dict[int, CodeType] = {}
    marked: dict[int, CodeType] = {}

    def own(callback: Any) -> Any:
        out = original(callback)
        if out is None or out is False or getattr(out, "_explorer_own", False):
            return out
        if region is not None and set_region is not None:
            set_region(region)  # compile_wrapper puts its own region back after the call
        if id(callback) not in made:

            def observe(frame: Any, result: Any) -> Any:
                touched[id(frame.f_code)] = frame.f_code
                if getattr(result, "guarded_code", 0) is None and getattr(
                    result, "apply_to_code", False
                ):
                    marked[id(frame.f_code)] = frame.f_code
                return result

            sentinel = _sentinel(_innermost(out), sentinels)
            made[id(callback)] = (callback, _own_callback(
                out, sentinel, observe, lambda hooks: export_hook(hooks, read_guards, read_failed)
            ))  # fmt: skip
        return made[id(callback)][1]

    lifted: list[CodeType] = []  # filled as marks are lifted: each goes back, even after a failure
    shapes: _SeenShapes | None = None
    try:
        _lift_marks(unmark, lifted)
        state.unmarked = [code.co_name for code in lifted]
        shapes = _SeenShapes()
        py_eval_frame._callback_from_stance = own
        yield state
    finally:
        py_eval_frame._callback_from_stance = original
        if shapes is not None:
            shapes.close()
        if set_region is not None and prior_region is not None:
            set_region(prior_region)
        own_ids = {id(sentinel) for _, sentinel in sentinels}
        try:
            state.dropped = _drop_entries(list(touched.values()), lambda b: id(b) in own_ids)
        except Exception as exc:  # the marks go back all the same; the capture says so
            state.failed.append(f"dropping the capture's cache entries failed: {exc!r}")
        finally:
            try:
                state.marks_undone = _put_marks_back(marked, lifted)
            except Exception as exc:
                state.failed.append(f"putting torch's eager marks back failed: {exc!r}")


class _SeenShapes:
    """Dynamo's record of the sizes each code was called with (``pgo._CODE_STATE``, keyed by
    file, line and name: automatic dynamic marks a size dynamic once it changed), set aside
    for the block and put back: the block's compiles start from none, as after a reset, and
    the sizes they see do not make the user's next recompile dynamic. Nor are they written
    to the user's saved profile: after each successful compile torch writes the code state
    to disk (``convert_frame`` calls ``pgo.put_code_state``; local writes are on by default
    once a cache key exists, ``torch.compiler.config.job_id``), which the block skips."""

    def __init__(self) -> None:
        import collections

        self.pgo: Any = None
        self.writers: list[tuple[Any, Any]] = []
        pgo = _module("torch._dynamo.pgo")
        if pgo is not None and hasattr(pgo, "_CODE_STATE") and hasattr(pgo, "CodeState"):
            self.pgo, self.saved = pgo, vars(pgo)["_CODE_STATE"]
            vars(pgo)["_CODE_STATE"] = collections.defaultdict(pgo.CodeState)
        # convert_frame imports the writer by name: both names are set aside
        for module in (_module("torch._dynamo.convert_frame"), pgo):
            if module is not None and "put_code_state" in vars(module):
                self.writers.append((module, vars(module)["put_code_state"]))
                vars(module)["put_code_state"] = _no_write

    def close(self) -> None:
        if self.pgo is not None:
            vars(self.pgo)["_CODE_STATE"] = self.saved
        for module, writer in self.writers:
            vars(module)["put_code_state"] = writer
        self.writers = []


def _no_write() -> None:
    """Stands in for ``pgo.put_code_state`` while a capture compiles."""


def _own_callback(out: Any, sentinel: object, observe: Callable[[Any, Any], Any],
                  own_hooks: Callable[[Any], Any] | None = None) -> Any:  # fmt: skip
    """``out`` (the callback torch would install) with ``sentinel`` as its innermost
    backend, telling ``observe`` each frame it converted and what came back, and compiling
    with ``own_hooks(hooks)`` (the guards' reader before the user's hooks). torch's usual
    callback (``CatchErrorsWrapper`` around a ``ConvertFrame``) is rebuilt around an
    observer; DDP's optimizer still finds the backend and the clone it needs. Other
    callbacks (a stance's) are wrapped as they are.

    The observer passes ``skip`` on as it came: torch's recorded stack of a compile
    (``log_dynamo_start``) drops ``4 + skip`` innermost frames, one more than torch's own
    (2.13, 2.14.1: the frame that called a compiled function is lost, a compiled module's
    caller survives behind ``Module._call_impl``), and the observer's frame makes up that
    one: the stack ends at the user's call. torch stops the stack at its first
    ``convert_frame`` frame, so the observer, inside it, is never shown."""
    inner = getattr(out, "_torchdynamo_orig_backend", None)
    catch_errors = _private("torch._dynamo.convert_frame", "CatchErrorsWrapper")
    if catch_errors is not None and type(out) is catch_errors and callable(inner):

        def observed(frame: Any, cache_entry: Any, hooks: Any, frame_state: Any, *,
                     skip: int = 0) -> Any:  # fmt: skip
            hooks = own_hooks(hooks) if own_hooks is not None else hooks
            return observe(frame, inner(frame, cache_entry, hooks, frame_state, skip=skip))

        observed._torchdynamo_orig_backend = sentinel  # type: ignore[attr-defined]
        if hasattr(inner, "_clone_with_backend"):
            observed._clone_with_backend = inner._clone_with_backend  # type: ignore[attr-defined]
        own = catch_errors(observed, out.hooks)
    else:

        def own(frame: Any, *args: Any, **kwargs: Any) -> Any:
            return observe(frame, out(frame, *args, **kwargs))

        own._torchdynamo_orig_backend = sentinel  # type: ignore[attr-defined]
    own._explorer_own = True
    return own


def _sentinel(backend: Any, known: list[tuple[object, object]]) -> object:
    """The block's own backend for ``backend``: one per backend as Dynamo tells them apart
    (the same or equal, as ``backend_match`` compares), so that two compiled modules with
    equal backends share the block's entries as they share the user's. A new partial
    equals only itself and still calls the user's compiler."""
    for theirs, own in known:
        try:
            if theirs is backend or bool(theirs == backend):
                return own
        except Exception:  # a backend that cannot be compared is not this one
            continue
    own = functools.partial(backend)
    known.append((backend, own))
    return own


# Codes a capture put torch's eager mark back on: still marked (until a reset, which also
# empties Dynamo's record of converted codes, checked beside this). Weak: a code that dies
# leaves it, and no id() of a dead code can name a new one.
_MARKS_PUT_BACK: weakref.WeakSet[CodeType] = weakref.WeakSet()


def _looks_marked(code: CodeType) -> bool:
    """Whether torch's eager mark is on ``code`` (torch has no getter): a capture put it
    back, or the code holds no cache entry at all. A code holding only entries the
    explorer dropped compiled fine: its lack of live entries is no mark."""
    entries = _private("torch._C._dynamo.eval_frame", "_debug_get_cache_entry_list")
    return code in _MARKS_PUT_BACK or (entries is not None and not entries(code))


def _lift_marks(codes: Iterable[CodeType], lifted: list[CodeType]) -> None:
    """Lift torch's eager mark from each of ``codes`` that looks marked, appending each to
    ``lifted`` as it goes (so a failure half-way still puts back those lifted)."""
    set_strategy = _private("torch._C._dynamo.eval_frame", "set_code_exec_strategy")
    check = _private("torch._dynamo.trace_rules", "check")
    input_codes = _private("torch._dynamo.convert_frame", "input_codes")
    stance = getattr(_private("torch._dynamo.eval_frame", "_stance"), "stance", "default")
    if stance != "default" or None in (set_strategy, check, input_codes):
        return  # other stances return no code without a failure
    for code in dict.fromkeys(codes):
        # torch's own frames (a module's __call__) are skipped by rule, not by a failure
        if check(code) or code not in input_codes:
            continue
        if _looks_marked(code):
            set_strategy(code, _strategy("DEFAULT"))
            lifted.append(code)


def _put_marks_back(marked: dict[int, CodeType], lifted: list[CodeType]) -> int:
    """Codes the block's compiles marked go back to no mark, lifted ones to torch's mark."""
    set_strategy = _private("torch._C._dynamo.eval_frame", "set_code_exec_strategy")
    if set_strategy is None:
        return 0
    again = {id(code) for code in lifted}
    undone = 0
    for key, code in marked.items():
        if key not in again:
            set_strategy(code, _strategy("DEFAULT"))
            _MARKS_PUT_BACK.discard(code)
            undone += 1
    for code in lifted:
        set_strategy(code, _strategy("SKIP"))
        _MARKS_PUT_BACK.add(code)
    return undone


def _strategy(action: str) -> Any:
    """``(action, DEFAULT)``: what a failed compile leaves (SKIP), or no mark (DEFAULT)."""
    frame_action = _private("torch._C._dynamo.eval_frame", "_FrameAction")
    exec_strategy = _private("torch._C._dynamo.eval_frame", "_FrameExecStrategy")
    return exec_strategy(getattr(frame_action, action), frame_action.DEFAULT)


def compiled_codes(target: object) -> list[CodeType]:
    """The codes Dynamo compiles when ``target`` runs compiled: a function's or a ``torch.compile``
    result's original code, and for a module the ``wrap_inline`` code torch calls it through
    and its class's ``forward`` (the frame Dynamo converts when the call itself is skipped)."""
    found = []
    wrapper = target.forward if isinstance(target, torch.nn.Module) else target
    original = getattr(wrapper, "_torchdynamo_orig_callable", wrapper)
    found.append(getattr(getattr(original, "__func__", original), "__code__", None))
    if isinstance(target, torch.nn.Module):
        inner = getattr(target, "_orig_mod", target)
        found.append(getattr(getattr(type(inner), "forward", None), "__code__", None))
    return [code for code in found if isinstance(code, CodeType)]

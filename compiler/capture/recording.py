"""Live capture: run code under torch.compile and record every stage it goes through.

``recording()`` is the primitive: inside it, every compile is recorded through
torch's structured trace, the bytecode hook and Inductor's fusion logs. ``explore``
wraps it for the common case of one function or module and its inputs. Whatever
capture changes in torch (log handlers and levels, config flags) is restored on
exit, also when the code inside raises.
"""

from __future__ import annotations

import contextlib
import dataclasses
import dis
import functools
import inspect
import json
import linecache
import logging
import platform
import re
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import CodeType
from typing import Any

from compiler import _compat
from compiler import decompile as decompiler
from compiler._compat.dynamo_globals import remove_at_exit
from compiler.capture.observe import Boundary
from compiler.gpu import triton_stages
from compiler.gpu.kernel_work import launch_grid
from compiler.gpu.lowered_lines import with_source_lines
from compiler.link.module_stack import module_paths
from compiler.model import (
    Compile,
    CompileId,
    Derived,
    Environment,
    Exploration,
    Kernel,
    Options,
    OutputCode,
    StageError,
    TritonVariant,
)
from compiler.parse.words.cudagraphs import run_kind
from compiler.trace.build import build_compiles
from compiler.trace.events import Event, event_from_dict
from compiler.trace.fold import (
    AUTOTUNE_EVENT,
    BYTECODE_EVENT,
    COMPILE_GRAPHS,
    CUDAGRAPH_EVENT,
    FUSION_IR_EVENT,
    INDUCTOR_GRAPHS,
    MODULE_STACK_EVENT,
)
from compiler.trace.renumber import as_if_reset

GRAPH_STAGES = COMPILE_GRAPHS | INDUCTOR_GRAPHS


class _TraceHandler(logging.Handler):
    """Receives torch's structured trace records as Events."""

    def __init__(self, sink: list[Event]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if isinstance(metadata, dict):
            event = event_from_dict(metadata, getattr(record, "payload", None))
            if event is not None:
                self.sink.append(event)
                if event.name in GRAPH_STAGES:
                    self._module_stacks(event)

    def _module_stacks(self, event: Event) -> None:
        """Record each node's ``nn_module_stack``, which the graph's text leaves out."""
        gm = _compat.graph_module_of_trace_call()
        if gm is None:
            return
        stacks = {}
        for node in gm.graph.nodes:
            found = node.meta.get("nn_module_stack")
            if isinstance(found, dict):
                paths = module_paths(found)
                if paths:
                    stacks[node.name] = list(paths)
        if stacks:
            meta = {"stage": event.name, "stacks": stacks}
            self.sink.append(
                Event(
                    key=MODULE_STACK_EVENT,
                    metadata=meta,
                    compile_id=event.compile_id,
                    rank=event.rank,
                )
            )


class _CudagraphHandler(logging.Handler):
    """Keeps what torch says about CUDA graphs (its ``cudagraphs`` and ``perf_hints``
    artifact logs, ``_compat.cudagraph_loggers``): one event per message, tagged with
    torch's compile id, which ``Recording.exploration`` renumbers with every other event;
    warm-ups and recordings are counted too.

    A message says its compile by the compile running (scheduler partitions, skips) or,
    at run time, by torch's id as its first argument (``[%s] Recording function=...``).
    One that says neither (``Recording cudagraph tree for symint key 8`` on torch 2.11)
    waits for the next message that does: torch logs it just before warming up or
    recording the same function; what still waits at the end goes to the last compile
    named (``finish``).
    """

    def __init__(self, sink: list[Event]) -> None:
        super().__init__(logging.DEBUG)
        self.sink = sink
        self.waiting: list[Event] = []
        self.last: CompileId | None = None

    def emit(self, record: logging.LogRecord) -> None:
        message = str(record.msg)
        what = run_kind(message)
        raw = record.args if isinstance(record.args, tuple) else (record.args,)
        args = raw if record.args else ()
        event = _event(CUDAGRAPH_EVENT, {"what": what} if what else {}, None)
        if message.startswith("[%s] ") and args:
            # torch's own id as the first argument: taken off the text, kept as the
            # event's id so that capture's renumbering reaches it
            if event.compile_id is None:
                with contextlib.suppress(ValueError):
                    event.compile_id = CompileId.from_string(str(args[0]))
            message, args = message[len("[%s] ") :], args[1:]
        try:
            text = message % args if args else message
        except Exception:  # a message torch cannot format must not break the user's run
            text = message
        artifact = record.name.rsplit(".__", 1)[-1]
        event.payload = f"{artifact}: {text[:_MESSAGE_CHARS]}"
        if event.compile_id is None:
            self.waiting.append(event)
            return
        self.last = event.compile_id
        for early in self.waiting:
            early.compile_id = event.compile_id
        self.sink.extend(self.waiting)
        self.waiting.clear()
        self.sink.append(event)

    def finish(self) -> None:
        """Give the messages no compile named to the last compile named (where none was,
        they stay without a compile: counted, but in no compile's log)."""
        for early in self.waiting:
            early.compile_id = self.last
        self.sink.extend(self.waiting)
        self.waiting.clear()


# A recording's input list can run to kilobytes per call: its head names the shapes.
_MESSAGE_CHARS = 2000


class _FusionIRHandler(logging.Handler):
    """Receives Inductor's ``ir_pre_fusion``/``ir_post_fusion`` logs, tagged with the
    compile they belong to."""

    def __init__(self, stage: str, sink: list[Event]) -> None:
        super().__init__(logging.DEBUG)
        self.stage = stage
        self.sink = sink

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
        except Exception as exc:  # a formatting failure must not break the user's compile
            text = f"<could not format the {self.stage} log: {exc}>"
        self.sink.append(_event(FUSION_IR_EVENT, {"stage": self.stage}, text))


def _event(key: str, metadata: dict[str, Any], payload: str | None) -> Event:
    current = _compat.current_compile_id()
    cid = None
    if current is not None:
        frame, fcid, attempt, ca = current
        cid = CompileId(
            frame_id=frame, frame_compile_id=fcid, attempt=attempt, compiled_autograd_id=ca
        )
    return Event(key=key, metadata=metadata, payload=payload, compile_id=cid)


@dataclass
class Recording:
    """What ``recording()`` collected. Call ``exploration()`` once the block is done."""

    decompile: bool = True
    keep_caches: bool = False
    events: list[Event] = field(default_factory=list)
    errors: list[StageError] = field(default_factory=list)
    device: str = ""
    target: str = ""
    options: Options | None = None
    counters_before: dict[str, int] = field(default_factory=dict)
    counters_after: dict[str, int] = field(default_factory=dict)
    triton_stages: bool = False
    started: float = field(default_factory=time.time)
    # compiles Dynamo had numbered per frame before the block: ids are rebased on them
    compiled_before: dict[int, int] = field(default_factory=dict)
    # torch's own compile id -> the Exploration's, where they differ (set by exploration())
    torch_ids: dict[str, str] = field(default_factory=dict)
    # its own failures (``recording(boundary=)``), reported by ``exploration()`` if its own
    boundary: Boundary = field(default_factory=Boundary)
    reports: bool = True

    def bytecode_hook(self, original: CodeType, transformed: CodeType) -> None:
        """Dynamo's bytecode hook: keep both codes as ``dis`` text (and decompiled source)."""
        meta: dict[str, Any] = {
            "code_name": original.co_name,
            "original": dis.Bytecode(original).dis(),
            "transformed": dis.Bytecode(transformed).dis(),
        }
        meta["source"] = _source_of(original)
        if self.decompile:
            # decompiling takes a noticeable part of a compile: decompile when a view asks
            meta["decompile"] = functools.partial(_decompile, transformed)
        self.events.append(_event(BYTECODE_EVENT, meta, None))

    def autotune_listener(
        self, timings: dict[Any, float], name: str, input_nodes: list[Any], *_: Any
    ) -> None:
        """Inductor's max-autotune feedback: every candidate of one op with its time."""
        choices = []
        for choice, ms in sorted(timings.items(), key=lambda item: item[1]):
            choices.append(
                {
                    "name": str(getattr(choice, "name", choice)),
                    "description": str(getattr(choice, "description", "")),
                    "ms": float(ms),
                }
            )
        sizes = []
        for node in input_nodes:
            try:
                sizes.append("x".join(str(s) for s in node.get_size()))
            except Exception:  # a size torch cannot print must not break the compile
                sizes.append("?")
        meta = {
            "op": name,
            "input_sizes": sizes,
            "choices": choices,
            "chosen": choices[0]["name"] if choices else "",
        }
        self.events.append(_event(AUTOTUNE_EVENT, meta, None))

    def exploration(self, *, source: str = "live") -> Exploration:
        """Assemble the Exploration from everything recorded so far, with the failures of
        the recording's own work as errors. It never raises: where assembling fails (a
        parser, a link), the Exploration holds no compiles and says why in its errors."""
        try:
            exploration = self._assembled(source)
        except Exception as exc:
            self.boundary.caught("trace", exc)
            exploration = Exploration(source=source, target=self.target, options=self.options,
                                      environment=environment(self.device or "cpu"))  # fmt: skip
        errors = self.boundary.take() if self.reports else []
        if not errors:
            return exploration
        return dataclasses.replace(exploration, errors=(*exploration.errors, *errors))

    def _assembled(self, source: str) -> Exploration:
        interned = [
            Event(key="str", metadata=(name, index))
            for index, name in _compat.interned_strings().items()
        ]
        events, renumbered = as_if_reset(self.events, self.compiled_before)
        self.torch_ids = {old: new for new, old in renumbered}
        result = build_compiles([*interned, *events], source=source)
        notes: list[str] = []
        if renumbered:
            notes.append(
                "Compile ids are numbered from this capture's first compile, as after a "
                "reset; torch's own ids in this process (its logs) were "
                + ", ".join(f"{new} = {old}" for new, old in renumbered[:8])
                + (" ..." if len(renumbered) > 8 else "")
                + "."
            )
        errors = list(self.errors)
        if self.triton_stages:
            notes.extend(self._attach_triton_stages(result.compiles, errors, result.derived))
        if self.keep_caches:
            notes.append(
                "Caches were kept on (keep_caches=True): on an FX graph or AOTAutograd cache "
                "hit torch skips the pre-grad and joint graphs, so those stages may be missing."
            )
        return Exploration(
            source=source,
            target=self.target,
            options=self.options,
            environment=environment(self.device or result.facts.get("device", "cpu")),
            compiles=tuple(result.compiles),
            errors=tuple(errors),
            notes=tuple(notes),
            counters={
                k: v - self.counters_before.get(k, 0)
                for k, v in self.counters_after.items()
                if v != self.counters_before.get(k, 0)
            },
        )

    def _attach_triton_stages(
        self, compiles: list[Compile], errors: list[StageError], cache: Derived
    ) -> list[str]:
        """Give each Triton kernel its compiled variants, read from Triton's cache now
        that the compile is done; say which came from a cache and which are missing."""
        outputs = [
            (o.path, [k.name for k in o.kernels if k.language == "triton"])
            for c in compiles
            for o in c.output_code
        ]
        outputs = [(path, names) for path, names in outputs if names]
        if not outputs:
            return []
        found = triton_stages.collect(outputs, since=self.started)
        compiles[:] = [_with_variants(c, found.variants, cache) for c in compiles]
        notes = []
        if found.from_cache:
            notes.append(
                f"{len(found.from_cache)} Triton kernel(s) were compiled before this capture "
                "and reused from a cache (Triton's cache or Inductor's in-process kernel "
                f"cache): {', '.join(sorted(set(found.from_cache))[:8])}. Their stages are "
                f"read from Triton's cache folder {found.cache_dir}; the timings of their "
                "compile are those of the cache hit."
            )
        if found.missing:
            where = found.cache_dir or "any cache folder"
            missing = ", ".join(sorted(set(found.missing))[:8])
            message = (
                f"no compiled Triton variant found in {where} for {missing}: the output "
                "module is no longer loaded in this process or Triton's cache was cleared."
            )
            errors.append(StageError(stage="triton", message=message))
        return notes


def _with_variants(
    compile_: Compile, variants: dict[tuple[str, str], tuple[TritonVariant, ...]], cache: Derived
) -> Compile:
    def kernel(out: OutputCode, k: Kernel) -> Kernel:
        if k.language != "triton" or (out.path, k.name) not in variants:
            return k
        found = _with_cached_choice(k.info, variants[(out.path, k.name)])
        chosen = next((v for v in found if v.chosen), None)
        grid = launch_grid(out, k, chosen.config) if chosen else ()
        return with_source_lines(dataclasses.replace(k, variants=found, grid=grid), cache)

    outputs = tuple(
        dataclasses.replace(out, kernels=tuple(kernel(out, k) for k in out.kernels))
        for out in compile_.output_code
    )
    return dataclasses.replace(compile_, output_code=outputs)


def _with_cached_choice(
    info: dict[str, str], variants: tuple[TritonVariant, ...]
) -> tuple[TritonVariant, ...]:
    """On an autotune cache hit Inductor compiles only the cached best config, and
    torch's ``triton_kernel_info`` names it: add its block sizes to that variant."""
    try:
        pairs = json.loads(info.get("best_config", "[]"))
        best = {str(k): str(v) for k, v in pairs}
    except (ValueError, TypeError):
        return variants
    if len(variants) != 1 or not best:
        return variants
    (only,) = variants
    return (dataclasses.replace(only, chosen=True, config={**best, **only.config}),)


# a line Python 3.11's inspect.findsource takes as where a function starts (later
# versions start at co_firstlineno whatever it holds): a decorator, a def, a lambda
_FIRST_LINE = re.compile(r"\s*(?:@|def\s|async\s+def\s)|.*(?<!\w)lambda[:\s]")


def _source_of(code: CodeType) -> str | None:
    """``inspect.getsource(code)``, or None where it raises.

    Read through linecache first: ``inspect.getsource`` first maps every loaded module
    to its file (a ``realpath`` per module, about 0.1 s on the first compile of a process
    that has torch loaded) to find the loader of a file that is not on disk. Where
    linecache has no lines, or the first line is not one inspect would start at, inspect
    reads it as before.
    """
    filename, first = code.co_filename, code.co_firstlineno
    linecache.checkcache(filename)
    lines = linecache.getlines(filename)
    if 0 < first <= len(lines) and (first == 1 or _FIRST_LINE.match(lines[first - 1])):
        return "".join(inspect.getblock(lines[first - 1 :]))
    try:
        return inspect.getsource(code)
    except (OSError, TypeError):
        return None


def _decompile(code: CodeType) -> tuple[str | None, str | None]:
    """(decompiled source, None), or (None, why not).

    Our decompiler first (``compiler.decompile``, Python 3.10-3.13); where it fails,
    depyf's output where depyf is installed and succeeds, with the reason ours failed.
    """
    try:
        return decompiler.decompile(code), None
    except decompiler.DecompileError as exc:
        ours = f"compiler.decompile could not decompile {code.co_name}: {exc}"
    try:
        import depyf  # type: ignore[import-untyped]
    except ImportError:
        return None, ours
    try:
        return str(depyf.decompile(code)), f"{ours}; shown: depyf's decompilation"
    except Exception as exc:  # depyf fails on some 3.11+ bytecode; never fatal
        return None, f"{ours}; depyf failed too: {type(exc).__name__}: {exc}"


def environment(device: str = "cpu") -> Environment:
    """Versions and device of this process."""
    import torch

    if device.startswith("cuda") and torch.cuda.is_available():
        device = f"{device} ({torch.cuda.get_device_name(0)})"
    return Environment(
        torch=_compat.torch_version(),
        triton=_triton_version(),
        python=sys.version.split()[0],
        platform=platform.platform(),
        device=device,
    )


@functools.cache
def _triton_version() -> str:
    # once per process: looking a distribution up scans every folder on sys.path
    with contextlib.suppress(Exception):
        from importlib.metadata import version

        return version("triton")
    return ""


@contextlib.contextmanager
def recording(
    *,
    keep_caches: bool = False,
    decompile: bool = True,
    triton_stages: bool | None = None,
    boundary: Boundary | None = None,
) -> Iterator[Recording]:
    """Record every torch.compile compile that happens inside the block.

    Args:
        keep_caches: leave the FX graph and AOTAutograd caches on. Off by default,
            because a cache hit skips the stages that would be recorded.
        decompile: decompile Dynamo's transformed bytecode (``compiler.decompile``, with
            depyf as the fallback where it is installed),
            when ``Bytecode.decompiled`` is first read rather than during the compile.
        triton_stages: keep every Triton kernel's TTIR, TTGIR, LLVM IR and PTX, and
            its SASS on demand (``compiler.with_sass``). By default on when CUDA is
            available. Nothing about where or how Triton compiles changes: the stages
            are read from Triton's cache after the compile, also for kernels that came
            from a cache (the Exploration then says so).
        boundary: where a failure of the recording's own hooks (called by torch while
            the user's code runs) and of putting torch back is kept, never raised (by
            default one of the recording's own, whose failures ``Recording.exploration``
            adds to the Exploration's errors; a boundary given is reported by its owner).

    Example:
        >>> import torch, compiler
        >>> f = torch.compile(torch.cos, backend="eager")
        >>> with compiler.recording() as rec:
        ...     _ = f(torch.randn(3))
        >>> len(rec.exploration().compiles)
        1
    """
    guard = boundary or Boundary()
    rec = Recording(decompile=decompile, keep_caches=keep_caches, boundary=guard,
                    reports=boundary is None)  # fmt: skip
    with guard.guard("isolation"):  # the Exploration may outlive torch's hold on its code
        remove_at_exit()
    trace_log = _compat.trace_logger()
    trace_handler = _TraceHandler(rec.events)
    fusion_loggers = [(s, _compat.fusion_ir_logger(s)) for s in _compat.FUSION_IR_ARTIFACTS]
    cudagraph_logs = _compat.cudagraph_loggers()
    saved_levels = [(trace_log, trace_log.level, trace_log.propagate)] + [
        (lg, lg.level, lg.propagate) for lg in [*(lg for _, lg in fusion_loggers), *cudagraph_logs]
    ]
    fusion_handlers: list[tuple[logging.Logger, logging.Handler]] = [
        (lg, _FusionIRHandler(s, rec.events)) for s, lg in fusion_loggers
    ]
    cudagraph_handler = _CudagraphHandler(rec.events)
    fusion_handlers.extend((lg, cudagraph_handler) for lg in cudagraph_logs)
    # torch calls these while the user's code compiles: a failure of ours stays here
    for handler in {id(h): h for h in (trace_handler, *(h for _, h in fusion_handlers))}.values():
        handler.emit = guard.hook("recording", handler.emit)  # type: ignore[method-assign]
    inductor = {"trace.provenance_tracking_level": 1}
    functorch: dict[str, Any] = {}
    if not keep_caches:
        inductor["fx_graph_cache"] = False
        functorch["enable_autograd_cache"] = False
    if triton_stages is None:
        import torch

        triton_stages = torch.cuda.is_available()
    rec.triton_stages = triton_stages
    hook = None
    remove_autotune_listener: Callable[[], None] | None = None
    try:
        with _compat.patched_configs(inductor, functorch), _compat.fusion_ir_formatted_once():
            trace_log.addHandler(trace_handler)
            trace_log.setLevel(logging.DEBUG)
            # Trace records are large and DEBUG: never let them reach the user's root
            # handlers (torch keeps this off too; a test runner may have turned it on).
            trace_log.propagate = False
            for lg, handler in fusion_handlers:
                if not lg.isEnabledFor(logging.INFO):
                    # Not asked for by the user: keep it out of their stderr.
                    lg.propagate = False
                lg.setLevel(logging.DEBUG)
                lg.addHandler(handler)
            hook = _compat.register_bytecode_hook(guard.hook("recording", rec.bytecode_hook))
            remove_autotune_listener = _compat.add_autotune_listener(
                guard.hook("recording", rec.autotune_listener)
            )
            rec.counters_before = _compat.counters_snapshot()
            rec.compiled_before = _compat.frame_compile_counts()
            try:
                yield rec
            finally:
                with guard.guard("recording"):
                    rec.counters_after = _compat.counters_snapshot()
                    cudagraph_handler.finish()
    finally:
        # each step on its own: one failing must not stop the others nor hide the user's
        if hook is not None:
            with guard.guard("restore"):
                hook.remove()
        if remove_autotune_listener is not None:
            with guard.guard("restore"):
                remove_autotune_listener()
        trace_log.removeHandler(trace_handler)
        for lg, handler in fusion_handlers:
            lg.removeHandler(handler)
        for lg, level, propagate in saved_levels:
            lg.setLevel(level)
            lg.propagate = propagate

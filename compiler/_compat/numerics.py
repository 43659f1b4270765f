"""Inductor's intermediates, observed while a compiled program runs (``compiler.numerics``).

torch's own hook (``torch._inductor.config.generate_intermediate_hooks`` with
``torch._inductor.hooks.intermediate_hook``) calls back only for extern-kernel results
(``codegen/wrapper.py``) and Triton kernels' live outputs (``codegen/simd.py``); C++
kernels make no call (checked on 2.13, CPU). So the explorer observes the output code
itself, the same way on every device: while a capture compiles, each Inductor graph's
``GraphLowering`` is kept with its post-grad graph and each buffer's origin node, and the
compiled module's ``call`` is wrapped so that one observed run keeps a copy of every
buffer right after the line of ``call`` that writes it (a line tracer on ``call``'s
frame only). Which line writes which buffer is read from the output code by the caller
(``compiler/parse/output_code.py``). Checked on torch 2.13 (CPU) and 2.14.1.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from types import CodeType, FrameType
from typing import Any

import torch


@dataclass
class GraphCall:
    """One call of a compiled graph: its inputs (copies, taken before the call), the RNG
    state it started from, each buffer's value right after the line that wrote it, and
    its outputs."""

    inputs: list[Any]
    rng: Any
    values: dict[str, tuple[int, Any]] = field(default_factory=dict)
    outputs: list[Any] = field(default_factory=list)
    # inputs the call wrote into (an optimizer's parameters), by position: their values after
    mutated: dict[int, Any] = field(default_factory=dict)
    # buffers a later kernel writes into again (index_put_ into zeros): after their last line
    last: dict[str, tuple[int, Any]] = field(default_factory=dict)


@dataclass
class LoweredGraph:
    """One Inductor graph as lowered: the post-grad graph module, the output code's file,
    the code of its ``call``, and for each buffer the post-grad node it holds the value of
    (``origin_node``) and every node fused into it (``origins``)."""

    module: Any
    path: str
    call_code: CodeType
    origin: dict[str, str]
    origins: dict[str, tuple[str, ...]]
    inputs: tuple[str, ...]
    mutated_inputs: tuple[int, ...] = ()
    # buffer -> the buffer it writes its value into (a mutation: ``MutationOutput``)
    mutates: dict[str, str] = field(default_factory=dict)
    calls: list[GraphCall] = field(default_factory=list)


@dataclass
class Intermediates:
    """What ``observe_intermediates`` collected; ``recording`` says whether calls are
    kept now (off while compiling, on for the observed run)."""

    graphs: list[LoweredGraph] = field(default_factory=list)
    recording: bool = True
    # our own failures, caught so that the user's run goes on as a plain run would
    errors: list[str] = field(default_factory=list)


def _clone(value: Any) -> Any:
    if isinstance(value, torch.Tensor):
        return value.detach().clone()
    return value


@contextlib.contextmanager
def observe_intermediates(
    writes_of: Callable[[str, int], dict[int, tuple[str, ...]]],
) -> Iterator[Intermediates]:
    """Keep every Inductor graph compiled inside the block and the values its ``call``
    writes (``GraphLowering.compile_to_module``, torch 2.11-2.14: ``compile_fx`` reads
    ``module.call`` right after it returns). ``writes_of(path, first_line)`` names the
    buffers each line of ``call`` writes. Undone on exit; the wrapped ``call`` of a graph
    compiled here records nothing once the block is left.

    Example:
        >>> with observe_intermediates(lambda path, line: {}) as seen:
        ...     pass
        >>> seen.graphs
        []
    """
    from torch._inductor.graph import GraphLowering

    seen = Intermediates()
    active = [True]
    original = GraphLowering.compile_to_module

    def compile_to_module(self: Any) -> Any:
        mod: Any = original(self)
        try:
            call = mod.call
            code = getattr(call, "__func__", call).__code__
            graph = LoweredGraph(
                module=self.module,
                path=str(mod.__file__),
                call_code=code,
                origin={
                    name: buf.origin_node.name
                    for name, buf in self.name_to_buffer.items()
                    if getattr(buf, "origin_node", None) is not None
                },
                origins={
                    name: tuple(sorted(o.name for o in getattr(buf, "origins", ())))
                    for name, buf in self.name_to_buffer.items()
                },
                inputs=tuple(self.graph_inputs),
                mutated_inputs=tuple(
                    i for i, name in enumerate(self.graph_inputs) if name in self.mutated_inputs
                ),
                mutates={
                    name: str(targets[-1])
                    for name, buf in self.name_to_buffer.items()
                    if (targets := list(getattr(buf, "get_mutation_names", list)()))
                },
            )
            lines = writes_of(graph.path, code.co_firstlineno)
            writes = {line: tuple(n for n in names if n in graph.origins)
                      for line, names in lines.items()}  # fmt: skip
            mod.call = _observed_call(call, graph, writes, seen, active)
            seen.graphs.append(graph)
        except Exception:
            pass
        return mod

    GraphLowering.compile_to_module = compile_to_module  # type: ignore[method-assign]
    try:
        yield seen
    finally:
        GraphLowering.compile_to_module = original  # type: ignore[method-assign]
        active[0] = False


def _observed_call(
    call: Callable[[list[Any]], Any],
    graph: LoweredGraph,
    writes: dict[int, tuple[str, ...]],
    seen: Intermediates,
    active: list[bool],
) -> Callable[[list[Any]], Any]:
    code = graph.call_code

    def observed(args: list[Any]) -> Any:
        if not (active[0] and seen.recording):
            return call(args)
        given = list(args)
        record = GraphCall(inputs=[_clone(a) for a in args], rng=rng_state())
        pending: list[tuple[int, str]] = []
        rewritten = set(graph.mutates.values())

        def on_line(frame: FrameType, event: str, _arg: Any) -> Any:
            if event not in ("line", "return"):
                return on_line
            try:
                for line, name in pending:
                    value = frame.f_locals.get(name)
                    if not isinstance(value, torch.Tensor):
                        continue
                    if name not in record.values:
                        record.values[name] = (line, value.detach().clone())
                    elif name in rewritten:
                        record.last[name] = (line, value.detach().clone())
                pending.clear()
                if event == "line":
                    line = frame.f_lineno
                    pending.extend((line, n) for n in writes.get(line, ()))
            except Exception as exc:
                seen.errors.append(f"a buffer could not be kept: {type(exc).__name__}: {exc}")
                pending.clear()
            return on_line

        def on_call(frame: FrameType, _event: str, _arg: Any) -> Any:
            return on_line if frame.f_code is code else None

        before = sys.gettrace()
        sys.settrace(on_call)
        try:
            out = call(args)
        finally:
            sys.settrace(before)
        try:
            record.outputs = [_clone(o) for o in out]
            for i in graph.mutated_inputs:
                if isinstance(given[i], torch.Tensor):
                    record.mutated[i] = given[i].detach().clone()
            graph.calls.append(record)
        except Exception as exc:
            seen.errors.append(f"a graph's outputs could not be kept: {type(exc).__name__}: {exc}")
        return out

    return observed


def rng_state() -> tuple[Any, Any]:
    """The CPU RNG state and, where CUDA is in use, the current device's (random ops of a
    CUDA graph draw from it; with ``fallback_random`` eager's draws must start there too).

    Example:
        >>> cpu, _ = rng_state()
        >>> cpu.dtype
        torch.uint8
    """
    cuda = torch.cuda.get_rng_state() if torch.cuda.is_initialized() else None  # type: ignore[no-untyped-call]
    return torch.get_rng_state(), cuda


def set_rng_state(state: tuple[Any, Any]) -> None:
    """Put back what ``rng_state`` returned.

    Example:
        >>> set_rng_state(rng_state())
    """
    cpu, cuda = state
    torch.set_rng_state(cpu)
    if cuda is not None:
        torch.cuda.set_rng_state(cuda)


def repro_tolerance() -> float:
    """The accuracy minifier's tolerance (``torch._dynamo.config.repro_tolerance``, 1e-3
    on 2.11-2.14), which ``same_two_models`` passes to ``same()``.

    Example:
        >>> repro_tolerance() > 0
        True
    """
    return float(torch._dynamo.config.repro_tolerance)


def same(ref: Any, res: Any, fp64_ref: Any, tol: float) -> bool:
    """torch's accuracy verdict (``torch._dynamo.utils.same``, as the minifier's
    ``same_two_models`` calls it: ``equal_nan=True``), without its error log.

    Example:
        >>> same(torch.ones(3), torch.ones(3), torch.ones(3, dtype=torch.float64), 1e-3)
        True
    """
    from torch._dynamo.utils import same as torch_same

    return bool(
        torch_same(ref, res, fp64_ref, tol=tol, equal_nan=True, log_error=lambda *a, **k: None)
    )


def fallback_random() -> bool:
    """Whether Inductor runs random ops through ATen (``config.fallback_random``), which
    makes them draw what eager draws.

    Example:
        >>> isinstance(fallback_random(), bool)
        True
    """
    return bool(torch._inductor.config.fallback_random)


def is_random(target: Any) -> bool:
    """Whether an FX node's target draws random numbers: ATen ops tagged
    ``nondeterministic_seeded`` and Inductor's own ``prims.inductor_random`` /
    ``inductor_seeds`` / ``inductor_lookup_seed`` (``fx_passes/replace_random.py``).

    Example:
        >>> is_random(torch.ops.aten.rand.default), is_random(torch.ops.aten.relu.default)
        (True, False)
    """
    prims = torch.ops.prims
    names = ("inductor_random", "inductor_seeds", "inductor_lookup_seed", "inductor_randint")
    own = {getattr(prims, n, None) for n in names}
    packet = getattr(target, "overloadpacket", None)
    if target in own or packet in own:
        return True
    tags = getattr(target, "tags", ())
    return torch.Tag.nondeterministic_seeded in tags


def is_view(target: Any) -> bool:
    """Whether an FX node's target returns a view of an input (its schema's first return
    aliases one, as ``aten.permute`` does), so that no kernel computes it.

    Example:
        >>> is_view(torch.ops.aten.permute.default), is_view(torch.ops.aten.relu.default)
        (True, False)
    """
    schema: Any = getattr(target, "_schema", None)
    if schema is None or not schema.returns:
        return False
    return schema.returns[0].alias_info is not None and not schema.is_mutable


def named_leaves(value: Any, root: str = "result") -> list[tuple[str, Any]]:
    """The leaves of what a target returned (tensors, numbers; tuples, lists, dicts and
    the classes torch's pytree knows, as Hugging Face's ``ModelOutput``), each named by its
    place (``torch.utils._pytree.tree_flatten_with_path``, private on 2.11-2.14).

    Example:
        >>> named_leaves((torch.ones(1), {"loss": 2.0}))
        [('result[0]', tensor([1.])), ("result[1]['loss']", 2.0)]
    """
    from torch.utils import _pytree

    flat, _ = _pytree.tree_flatten_with_path(value)
    return [(root + _pytree.keystr(path), leaf) for path, leaf in flat]

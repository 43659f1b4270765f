"""The Exploration: plain, frozen, JSON-friendly data describing one capture.

Everything the explorer renders is here, and nothing here is a torch object: graph
and kernel text is kept exactly as torch emitted it, next to the structure parsed
from it. The same classes come out of a live capture and out of a ``TORCH_TRACE``
log, so a view never needs to know which one it is looking at.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from .findings import Finding

_T = TypeVar("_T")

# (major, minor): a new field with a default bumps minor; removing, renaming or
# retyping a field, or adding one without a default, bumps major.
SCHEMA_VERSION = (3, 0)

_FROZEN = {"frozen": True, "kw_only": True, "slots": True}

_COMPILE_ID_RE = re.compile(
    r"^(?:!(?P<ca>\d+)(?:/(?P<frame_ca>\d+)/(?P<fcid_ca>\d+))?|(?P<frame>\d+)/(?P<fcid>\d+))"
    r"(?:_(?P<attempt>\d+))?$"
)


@dataclass(**_FROZEN)
class CompileId:
    """Torch's compile id: frame, compile of that frame, restart attempt.

    Its string form is torch's own (``0/1``, ``!0/0/1`` under compiled autograd,
    ``0/1_2`` for attempt 2), so ids can be matched against torch logs and tlparse.

    Example:
        >>> str(CompileId.from_string("0/1_2"))
        '0/1_2'
    """

    frame_id: int | None
    frame_compile_id: int | None
    attempt: int = 0
    compiled_autograd_id: int | None = None

    def __str__(self) -> str:
        if self.compiled_autograd_id is not None:
            base = f"!{self.compiled_autograd_id}"
            if self.frame_id is not None:
                base += f"/{self.frame_id}/{self.frame_compile_id}"
        else:
            base = f"{self.frame_id}/{self.frame_compile_id}"
        return base if self.attempt == 0 else f"{base}_{self.attempt}"

    @classmethod
    def from_string(cls, text: str) -> CompileId:
        """Parse torch's string form; raises ``ValueError`` on anything else."""
        m = _COMPILE_ID_RE.match(text.strip())
        if m is None:
            raise ValueError(f"not a torch compile id: {text!r} (expected e.g. '0/1' or '!0/0/1')")
        g = m.groupdict()
        attempt = int(g["attempt"] or 0)
        if g["ca"] is not None:
            frame = g["frame_ca"]
            fcid = g["fcid_ca"]
            return cls(
                frame_id=int(frame) if frame is not None else None,
                frame_compile_id=int(fcid) if fcid is not None else None,
                attempt=attempt,
                compiled_autograd_id=int(g["ca"]),
            )
        return cls(frame_id=int(g["frame"]), frame_compile_id=int(g["fcid"]), attempt=attempt)

    def without_attempt(self) -> CompileId:
        """The same id at attempt 0: the key under which restarts are grouped."""
        return CompileId(
            frame_id=self.frame_id,
            frame_compile_id=self.frame_compile_id,
            compiled_autograd_id=self.compiled_autograd_id,
        )


@dataclass(**_FROZEN)
class SourceLoc:
    """A place in user code: file, line, function and the line's text."""

    filename: str
    line: int
    function: str = ""
    code: str = ""

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}"


@dataclass(**_FROZEN)
class StageError:
    """A stage that could not be captured or parsed, and why. Never fatal."""

    stage: str
    message: str


@dataclass(**_FROZEN)
class TensorMeta:
    """Shape, dtype, stride and device as torch prints them (``f32[4, s0][s0, 1]cpu``)."""

    dtype: str
    shape: tuple[str, ...]
    stride: tuple[str, ...]
    device: str


@dataclass(**_FROZEN)
class Node:
    """One FX node, parsed from the graph text torch printed.

    ``op`` uses torch.fx's op names. ``args`` and ``kwargs`` hold each argument's
    source text; ``inputs`` names the nodes it reads and ``users`` the nodes that
    read it. ``line`` is the 1-based line of the node in ``Graph.text``.
    """

    name: str
    op: str
    target: str
    args: tuple[str, ...] = ()
    kwargs: dict[str, str] = field(default_factory=dict)
    inputs: tuple[str, ...] = ()
    users: tuple[str, ...] = ()
    meta: tuple[TensorMeta, ...] = ()
    annotation: str = ""
    source: SourceLoc | None = None
    module: str = ""
    line: int = 0
    # schema 2.0 (contract; filled by compiler/build.py):
    # ids of the kernels this node ended up in (``forward/cpp_fused_add_0``), through
    # the provenance maps; empty where torch recorded no link.
    kernels: tuple[str, ...] = ()
    # the nn.Module hierarchy the node came from, outermost first, as module paths
    # (``("transformer", "transformer.h.0", "transformer.h.0.attn")``; containers that
    # are never called, like a ModuleList ``h``, are not in it, as in torch's own
    # stacks): from ``nn_module_stack`` (live capture), or on a trace reconstructed from
    # parameter names (compiler/module_stack.py); AOT graphs get theirs from their input
    # descriptors, source lines and dataflow (compiler/aot_stacks.py), post-grad graphs
    # through provenance, then their AOT graph's stacks by name, then source lines and
    # dataflow (compiler/post_stacks.py); empty for top-level code and where nothing
    # supports one.
    module_stack: tuple[str, ...] = ()


@dataclass(**_FROZEN)
class Graph:
    """A graph at one stage (``dynamo_output_graph``, ``aot_forward_graph``, ...).

    ``text`` is exactly what torch emitted; ``nodes`` is parsed from it. A loaded trace
    or a live capture parses it on first access (``Graph.deferred``): ``nodes`` and
    ``parse_error`` read like plain fields, but a graph nobody looks at is never parsed.
    """

    stage: str
    text: str
    nodes: tuple[Node, ...] = ()
    parse_error: str | None = None

    @classmethod
    def deferred(
        cls, *, stage: str, text: str, parse: Callable[[], tuple[tuple[Node, ...], str | None]]
    ) -> Graph:
        """A graph whose ``nodes`` and ``parse_error`` come from ``parse()``, called once,
        when either is first read.

        Example:
            >>> g = Graph.deferred(stage="s", text="", parse=lambda: ((), "empty"))
            >>> g.parse_error
            'empty'
        """
        def parse_once() -> tuple[tuple[Node, ...], str | None]:
            try:
                return parse()
            except Exception as exc:  # a view reading .nodes must get a graph, not a crash
                return (), f"{type(exc).__name__}: {exc}"

        graph = cls(stage=stage, text=text)
        _defer_graph(graph, parse_once)
        return graph

    def node(self, name: str, module: str = "") -> Node | None:
        """The node called ``name`` (in nested module ``module``), or None."""
        for n in self.nodes:
            if n.name == name and n.module == module:
                return n
        return None


class _Deferred:
    """What a deferred object's first derived slot holds until one of them is read."""

    __slots__ = ("parse",)

    def __init__(self, parse: Callable[[], tuple[Any, ...]]) -> None:
        self.parse = parse


class _ParsedOnRead:
    """Slot wrapper for fields computed from another field on first read (``Graph.nodes``
    and ``parse_error`` from ``text``; ``Guards.guards`` from ``tree``): the first read
    of any of them runs the deferred parse and stores every result in its slot (frozen
    dataclasses forbid ``setattr``, not slot writes)."""

    def __init__(self, slots: tuple[Any, ...], index: int) -> None:
        self.slots = slots
        self.slot = slots[index]

    def __get__(self, obj: Any, owner: Any = None) -> Any:
        if obj is None:
            return self.slot.__get__(obj, owner)
        value = self.slots[0].__get__(obj, owner)
        if isinstance(value, _Deferred):
            for slot, result in zip(self.slots, value.parse(), strict=True):
                slot.__set__(obj, result)
        return self.slot.__get__(obj, owner)

    def __set__(self, obj: Any, value: Any) -> None:
        self.slot.__set__(obj, value)


def _derived_on_read(
    cls: type, *names: str
) -> Callable[[Any, Callable[[], tuple[Any, ...]]], None]:
    """Make ``names`` (fields of slotted ``cls``) computable on first read; returns the
    function that defers them on one instance: ``defer(obj, parse)``, where ``parse()``
    returns their values in the order of ``names``."""
    slots = tuple(cls.__dict__[name] for name in names)
    for i, name in enumerate(names):
        setattr(cls, name, _ParsedOnRead(slots, i))

    def defer(obj: Any, parse: Callable[[], tuple[Any, ...]]) -> None:
        slots[0].__set__(obj, _Deferred(parse))

    return defer


_defer_graph = _derived_on_read(Graph, "nodes", "parse_error")


def replace_lazily(obj: _T, **changes: Any) -> _T:
    """``dataclasses.replace(obj, **changes)`` that leaves fields computed on first read
    (``Graph.nodes``, ``Kernel.user_lines``, ...) uncomputed: the copy computes them
    when it is read, as ``obj`` would have.

    Example:
        >>> g = Graph.deferred(stage="s", text="", parse=lambda: ((), "empty"))
        >>> replace_lazily(g, stage="t").parse_error
        'empty'
    """
    cls = type(obj)
    copy = cls.__new__(cls)
    for f in dataclasses.fields(cls):  # type: ignore[arg-type]
        slot = cls.__dict__[f.name]
        slot = slot.slot if isinstance(slot, _ParsedOnRead) else slot
        slot.__set__(copy, changes[f.name] if f.name in changes else slot.__get__(obj, cls))
    return copy


@dataclass(**_FROZEN)
class Bytecode:
    """A frame's bytecode before and after Dynamo, as ``dis`` prints it.

    ``decompiled`` is best-effort source for the transformed code; when the
    decompiler fails, ``decompile_error`` says why. A live capture decompiles on first
    read of either (``Bytecode.deferred``): decompiling costs time in the user's
    compile, and most views never show it.
    """

    code_name: str
    original: str | None = None
    transformed: str | None = None
    source: str | None = None
    decompiled: str | None = None
    decompile_error: str | None = None
    # schema 2.0: the user source line (in the frame's file) of each line of
    # ``original``/``transformed`` (``dis`` text split on newlines); None where none.
    original_lines: tuple[int | None, ...] = ()
    transformed_lines: tuple[int | None, ...] = ()

    @classmethod
    def deferred(
        cls, *, decompile: Callable[[], tuple[str | None, str | None]], **fields: Any
    ) -> Bytecode:
        """Bytecode whose ``decompiled`` and ``decompile_error`` come from
        ``decompile()``, called once, when either is first read; ``fields`` are the others.

        Example:
            >>> b = Bytecode.deferred(code_name="f", decompile=lambda: ("def f(): pass", None))
            >>> b.decompiled
            'def f(): pass'
        """

        def decompile_once() -> tuple[str | None, str | None]:
            try:
                return decompile()
            except Exception as exc:  # a view reading .decompiled must get text, not a crash
                return None, f"{type(exc).__name__}: {exc}"

        bytecode = cls(**fields)
        _defer_bytecode(bytecode, decompile_once)
        return bytecode


_defer_bytecode = _derived_on_read(Bytecode, "decompiled", "decompile_error")


@dataclass(**_FROZEN)
class Guard:
    """One guard from the guard tree: its type, expression and tree position."""

    kind: str
    expr: str
    depth: int
    line: int
    origin: str = ""


@dataclass(**_FROZEN)
class Guards:
    """The guard tree text Dynamo printed, plus its guards as a list.

    A loaded trace parses ``guards`` from ``tree`` on first read (``Guards.deferred``):
    a large model has tens of thousands of guards, and most views never list them.
    """

    tree: str
    guards: tuple[Guard, ...] = ()
    symbolic: tuple[str, ...] = ()

    @classmethod
    def deferred(
        cls, *, tree: str, symbolic: tuple[str, ...], parse: Callable[[], tuple[Guard, ...]]
    ) -> Guards:
        """Guards whose ``guards`` come from ``parse()``, called once, on first read."""
        guards = cls(tree=tree, symbolic=symbolic)
        _defer_guards(guards, lambda: (parse(),))
        return guards


_defer_guards = _derived_on_read(Guards, "guards")


@dataclass(**_FROZEN)
class GraphBreak:
    """Why Dynamo stopped tracing, where in user code, and what torch suggests."""

    reason: str
    summary: str
    location: SourceLoc | None = None
    hints: tuple[str, ...] = ()
    user_stack: tuple[SourceLoc, ...] = ()
    documentation: str = ""
    text: str = ""
    # schema 3.0 (derived, compiler/user_code.py): for each frame of ``user_stack``,
    # whether it is the user's compiled code (a frame in the file of a compiled frame,
    # not in torch or this package, not the caller such as pytest or runpy).
    user_frames: tuple[bool, ...] = ()


@dataclass(**_FROZEN)
class RecompileReason:
    """A failed guard that caused a recompile, e.g. ``tensor 'x' size mismatch``."""

    previous: str
    reason: str
    text: str


@dataclass(**_FROZEN)
class LoweredStage:
    """One stage Triton lowered a kernel to (``ttir``, ``ttgir``, ``llir``, ``ptx``,
    ``sass``): its text, or why it is missing."""

    stage: str
    text: str = ""
    error: str = ""
    # schema 2.0: the 1-based ``Kernel.source`` line each line of ``text`` was lowered
    # from (from TTIR/TTGIR ``loc``, LLVM debug info, PTX ``.loc``); None where unknown.
    # A capture maps them on first read (``LoweredStage.deferred``): a model's hundreds
    # of kernels cost a second of parsing that only an opened lowering pane needs.
    source_lines: tuple[int | None, ...] = ()

    @classmethod
    def deferred(
        cls, *, lines: Callable[[], tuple[int | None, ...]], **fields: Any
    ) -> LoweredStage:
        """A stage whose ``source_lines`` come from ``lines()``, called once, when first
        read; ``fields`` are the others.

        Example:
            >>> s = LoweredStage.deferred(stage="ptx", text="a\nb", lines=lambda: (1, None))
            >>> s.source_lines
            (1, None)
        """
        stage = cls(**fields)

        def lines_once() -> tuple[tuple[int | None, ...]]:
            try:
                return (lines(),)
            except Exception:  # a line map is an aid: without one, the text still shows
                return ((None,) * (stage.text.count("\n") + 1) if stage.text else (),)

        _defer_stage(stage, lines_once)
        return stage


_defer_stage = _derived_on_read(LoweredStage, "source_lines")


@dataclass(**_FROZEN)
class TritonVariant:
    """One compiled variant of a Triton kernel (autotuning compiles one per config).

    ``config`` holds the launch config (``num_warps``, ``num_stages`` and, for the
    chosen variant, the block sizes Inductor recorded); ``target`` is e.g.
    ``cuda sm90 warp32``; ``cache_key`` is its folder in Triton's cache. Together
    with the kernel source this is what it takes to lower the kernel again elsewhere.
    Only the chosen variant carries stage texts; the others are summaries whose stages
    say where their texts are (``compiler/triton_stages.py`` says why).
    """

    hash: str
    cache_key: str = ""
    config: dict[str, str] = field(default_factory=dict)
    chosen: bool = False
    target: str = ""
    triton_version: str = ""
    shared_memory: int = 0
    stages: tuple[LoweredStage, ...] = ()


@dataclass(**_FROZEN)
class AutotuneChoice:
    """One candidate Inductor benchmarked for an op under max-autotune."""

    name: str
    description: str = ""
    ms: float | None = None


@dataclass(**_FROZEN)
class Autotuning:
    """Inductor's max-autotune benchmark of one op (``mm``, ``addmm``, conv, ...):
    the input sizes, every candidate with its time, and the one it chose (fastest)."""

    op: str
    input_sizes: tuple[str, ...] = ()
    choices: tuple[AutotuneChoice, ...] = ()
    chosen: str = ""
    # schema 2.0: id of the output-code kernel that runs the chosen candidate, only
    # where that is provable (template constexprs, stages and warps match); else None.
    chosen_kernel: str | None = None


@dataclass(**_FROZEN)
class KernelTiming:
    """A kernel's measured device time (warm, GPU-synchronized by the profiler) and the
    bandwidth it achieved against the device's measured copy bandwidth.

    ``bytes`` is estimated from the shapes and dtypes of the buffers the wrapper
    passes to the kernel (each read or written once, ``in_out_ptr`` both); None where a
    shape is symbolic. ``peak_gbps`` is a measured device-to-device copy (and
    ``Environment.peak_matmul_tflops`` a measured 8192³ fp32 matmul), not the
    datasheet figure; a kernel whose inputs are still in L2 from the kernel before it,
    or a streaming kernel more efficient than ``copy_``, can come out above it.
    ``flops`` counts the multiply-adds of matrix products (2·M·N·K, library calls and
    Triton mm templates) over all of the kernel's call sites in one run of the program;
    ``achieved_tflops`` divides it by the kernel's device time per run.
    """

    calls: int
    median_us: float
    min_us: float
    bytes: int | None = None
    achieved_gbps: float | None = None
    peak_gbps: float | None = None
    flops: int | None = None
    achieved_tflops: float | None = None


@dataclass(**_FROZEN)
class Kernel:
    """One kernel of Inductor's output code.

    ``language`` is ``cpp``, ``triton`` or ``extern`` (a library call such as
    ``extern_kernels.mm``). ``source`` is byte-for-byte what Inductor compiled;
    ``first_line``/``last_line`` place the definition in ``OutputCode.text``.
    ``post_grad_nodes`` and ``user_stack`` come from Inductor's provenance maps;
    ``source_nodes`` from the ``# Topologically Sorted Source Nodes: [...]`` comment
    Inductor writes beside the kernel or its call (present even when the maps are empty).
    Triton kernels also carry ``info`` (torch's ``triton_kernel_info``: autotune cache
    state, number of configs, compile time) and, captured on a GPU, ``variants`` with
    every stage Triton lowered them to.
    """

    name: str
    language: str
    source: str
    # schema 2.0: unique in its Compile: ``<OutputCode.key>/<name>``.
    id: str = ""
    first_line: int = 0
    last_line: int = 0
    call_lines: tuple[int, ...] = ()
    post_grad_nodes: tuple[str, ...] = ()
    user_stack: tuple[SourceLoc, ...] = ()
    source_nodes: tuple[str, ...] = ()
    info: dict[str, str] = field(default_factory=dict)
    variants: tuple[TritonVariant, ...] = ()
    timing: KernelTiming | None = None
    grid: tuple[int, ...] = ()
    # schema 3.0 (derived, compiler/user_code.py): the user source lines this kernel came
    # from, each once, in order: ``user_stack``, then the source line of each post-grad
    # node it ran (``post_grad_nodes``, ``source_nodes``); empty where torch recorded
    # neither. Computed on first read (it parses the post-grad graph).
    user_lines: tuple[SourceLoc, ...] = ()

    def deferred_user_lines(self, lines: Callable[[], tuple[SourceLoc, ...]]) -> Kernel:
        """A copy of this kernel whose ``user_lines`` is ``lines()``, called on first read.

        Example:
            >>> k = Kernel(name="k", language="cpp", source="")
            >>> k.deferred_user_lines(lambda: (SourceLoc(filename="f.py", line=2),)).user_lines
            (SourceLoc(filename='f.py', line=2, function='', code=''),)
        """
        k = replace_lazily(self)  # reading self's fields would compute its own user lines
        _defer_kernel(k, lambda: (lines(),))
        return k


_defer_kernel = _derived_on_read(Kernel, "user_lines")


@dataclass(**_FROZEN)
class FusedNode:
    """A scheduler node after fusion: which ops went together, from ``ir_post_fusion``."""

    name: str
    kind: str
    members: tuple[str, ...]
    buffers: tuple[str, ...] = ()
    extern_kernel: str = ""
    text: str = ""


@dataclass(**_FROZEN)
class Schedule:
    """Inductor's schedule before and after fusion (texts as torch logged them)."""

    pre_fusion: str | None = None
    post_fusion: str | None = None
    fused: tuple[FusedNode, ...] = ()


@dataclass(**_FROZEN)
class Provenance:
    """Inductor's provenance maps, as emitted with provenance tracking on.

    ``pre_to_post`` maps pre-grad (Dynamo) node names to post-grad node names,
    ``kernel_to_post`` kernel names to the post-grad nodes fused into them.
    """

    pre_to_post: dict[str, tuple[str, ...]] = field(default_factory=dict)
    post_to_pre: dict[str, tuple[str, ...]] = field(default_factory=dict)
    kernel_to_post: dict[str, tuple[str, ...]] = field(default_factory=dict)
    post_to_kernel: dict[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(**_FROZEN)
class OutputCode:
    """One Inductor compile of one graph (forward, backward or inference).

    ``graphs`` holds its post-grad graphs (``before_post_grad_graph``,
    ``inductor_post_grad_graph``), ``text`` the generated module exactly as written,
    ``kernels`` the kernels split out of it, ``schedule`` the scheduler's view and
    ``provenance`` the maps that link all of these back to the Dynamo graph.
    """

    graph: str
    aot_id: str
    text: str
    # schema 2.0: unique in its Compile: ``forward``, ``backward``, ``inference``
    # (``forward#2`` for a second one); the prefix of its kernel ids and pane ids.
    key: str = ""
    path: str = ""
    graphs: dict[str, Graph] = field(default_factory=dict)
    kernels: tuple[Kernel, ...] = ()
    schedule: Schedule | None = None
    provenance: Provenance = field(default_factory=Provenance)
    errors: tuple[StageError, ...] = ()

    def kernel(self, name: str) -> Kernel | None:
        """The kernel called ``name``, or None."""
        for k in self.kernels:
            if k.name == name:
                return k
        return None


@dataclass(**_FROZEN)
class Phase:
    """A timed compiler phase (``dynamo``, ``backend_compile``, ``inductor_compile``...)."""

    name: str
    seconds: float
    depth: int = 0


@dataclass(**_FROZEN)
class CompileMetrics:
    """Timing and cache figures from torch's ``compilation_metrics``."""

    entire_frame_seconds: float | None = None
    backend_seconds: float | None = None
    inductor_seconds: float | None = None
    code_gen_seconds: float | None = None
    backward_seconds: float | None = None
    phases: tuple[Phase, ...] = ()
    cache_events: tuple[str, ...] = ()
    fx_cache_hits: int = 0
    fx_cache_misses: int = 0
    aot_cache_hits: int = 0
    aot_cache_misses: int = 0
    guard_count: int | None = None
    graph_op_count: int | None = None
    fail_type: str | None = None
    fail_reason: str | None = None
    cudagraph_skip_reason: str | None = None
    cudagraph_warmups: int = 0
    cudagraph_recordings: int = 0

    def times(self) -> tuple[tuple[str, float], ...]:
        """The headline compile times that torch reported, as (label, seconds)."""
        figures = (
            ("entire frame", self.entire_frame_seconds),
            ("backend", self.backend_seconds),
            ("Inductor", self.inductor_seconds),
            ("code generation", self.code_gen_seconds),
            ("backward (Inductor)", self.backward_seconds),
        )
        return tuple((label, value) for label, value in figures if value is not None)


@dataclass(**_FROZEN)
class Compile:
    """Everything one compile (one compile id) went through, stage by stage.

    ``graphs`` is keyed by the trace key of each graph stage, verbatim:
    ``dynamo_output_graph``, ``before_pre_grad_graph``, ``aot_joint_graph``,
    ``aot_forward_graph``, ``aot_backward_graph``, ``aot_inference_graph``,
    ``inductor_post_grad_graph`` and the rest; ``output_code`` holds one entry per
    graph Inductor generated code for.
    """

    compile_id: CompileId
    # schema 2.0: unique in the Exploration: ``0/1``, or ``rank1:0/1`` on several ranks.
    key: str = ""
    # schema 2.0: the key of the compile this one hangs under: a resume function under
    # the compile whose graph break made it, ``N/k`` under ``N/k-1``; None at top level.
    parent: str | None = None
    rank: int | None = None
    code_name: str = ""
    filename: str = ""
    first_line: int = 0
    is_resume: bool = False
    status: str = "ok"
    attempts: int = 1
    restart_reasons: tuple[str, ...] = ()
    stack: tuple[SourceLoc, ...] = ()
    bytecode: Bytecode | None = None
    graphs: dict[str, Graph] = field(default_factory=dict)
    guards: Guards | None = None
    graph_breaks: tuple[GraphBreak, ...] = ()
    recompile_reasons: tuple[RecompileReason, ...] = ()
    output_code: tuple[OutputCode, ...] = ()
    metrics: CompileMetrics = field(default_factory=CompileMetrics)
    artifacts: dict[str, str] = field(default_factory=dict)
    errors: tuple[StageError, ...] = ()
    autotuning: tuple[Autotuning, ...] = ()
    # schema 3.0 (derived, compiler/user_code.py): for a resume function
    # (``torch_dynamo_resume_in_f_at_12``), where it resumes: line 12 of ``f`` in
    # ``filename``; None for every other compile.
    resumes: SourceLoc | None = None

    @property
    def label(self) -> str:
        """``0/1 f`` style label for selectors."""
        return f"{self.compile_id} {self.code_name}".strip()

    def kernels(self) -> tuple[Kernel, ...]:
        """All kernels of all output code of this compile, in order."""
        return tuple(k for oc in self.output_code for k in oc.kernels)


@dataclass(**_FROZEN)
class CallTiming:
    """Where the time of one call goes, eager against compiled (``explore(measure=True)``).

    Times are per call, in milliseconds, measured after warm-up and synchronised on
    GPU: medians, with the spread as (min, max) over the repeated runs. ``device_ms``
    is the device time of every kernel the compiled call ran (library calls included);
    ``cpu_ms`` the rest of the compiled call on the host (guards, wrapper, launches).
    The CUDA-graph counts and ``input_copy_bytes`` are per call, averaged over the runs.
    """

    runs: int
    eager_ms: float
    compiled_ms: float
    eager_spread_ms: tuple[float, float] = (0.0, 0.0)
    compiled_spread_ms: tuple[float, float] = (0.0, 0.0)
    device_ms: float | None = None
    cpu_ms: float | None = None
    cudagraph_replays: float = 0.0
    cudagraph_recordings: float = 0.0
    cudagraph_warmups: float = 0.0
    input_copy_bytes: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def speedup(self) -> float:
        """Eager time over compiled time: above 1 when compiling paid off."""
        return self.eager_ms / self.compiled_ms if self.compiled_ms else float("inf")


@dataclass(**_FROZEN)
class Environment:
    """Where the capture ran."""

    torch: str = ""
    triton: str = ""
    python: str = ""
    platform: str = ""
    device: str = ""
    peak_copy_gbps: float | None = None
    peak_matmul_tflops: float | None = None
    cudagraph_replays_per_run: float | None = None


@dataclass(**_FROZEN)
class Options:
    """How ``explore`` compiled the target (``None``: torch's default was used)."""

    backend: str | None = "inductor"
    mode: str | None = None
    dynamic: bool | None = None
    fullgraph: bool = False
    options: dict[str, str] = field(default_factory=dict)
    keep_caches: bool = False
    wrapped: bool = True


@dataclass(**_FROZEN)
class Exploration:
    """One capture: every compile a program triggered, each stage as data.

    Build one with ``compiler.explore`` or ``compiler.load_trace``; round-trip it
    with ``to_json``/``from_json``. ``counters`` holds how much Dynamo's and
    Inductor's event counters grew during a live capture (``inductor.cudagraph_skips``,
    ``inductor.cudagraph_partitions``, ``stats.unique_graphs``, ...).

    Example:
        >>> import torch, compiler
        >>> exp = compiler.explore(torch.sin, torch.randn(4), backend="eager")
        >>> [str(c.compile_id) for c in exp.compiles]
        ['0/0']
    """

    source: str
    target: str = ""
    options: Options | None = None
    environment: Environment = field(default_factory=Environment)
    compiles: tuple[Compile, ...] = ()
    errors: tuple[StageError, ...] = ()
    notes: tuple[str, ...] = ()
    counters: dict[str, int] = field(default_factory=dict)
    # schema 2.0: eager against compiled time per call (``explore(measure=True)``).
    call_timing: CallTiming | None = None
    unknown_keys: tuple[str, ...] = ()

    def compile(self, compile_id: str | CompileId, rank: int | None = None) -> Compile:
        """The compile with this id (``"0/1"``) on ``rank``; ``KeyError`` if absent."""
        cid = CompileId.from_string(compile_id) if isinstance(compile_id, str) else compile_id
        for c in self.compiles:
            if c.compile_id == cid and (rank is None or c.rank == rank):
                return c
        known = ", ".join(str(c.compile_id) for c in self.compiles) or "none"
        raise KeyError(f"no compile {cid} in this exploration (compiles: {known})")

    @property
    def ranks(self) -> tuple[int | None, ...]:
        """The distinct ranks, in order of first appearance (``(None,)`` for one process)."""
        seen: dict[int | None, None] = {}
        for c in self.compiles:
            seen.setdefault(c.rank, None)
        return tuple(seen)

    @property
    def graph_breaks(self) -> tuple[GraphBreak, ...]:
        """Every graph break of every compile."""
        return tuple(gb for c in self.compiles for gb in c.graph_breaks)

    @property
    def recompiles(self) -> tuple[Compile, ...]:
        """Compiles that happened because a guard failed."""
        return tuple(c for c in self.compiles if c.recompile_reasons)

    def findings(self) -> tuple[Finding, ...]:
        """The advisor's ranked diagnosis of this exploration, most important first."""
        from .advisor import diagnose

        return diagnose(self)

    def to_json(self, *, indent: int | None = None, compact: bool = True) -> str:
        """Serialize losslessly, schema version first; repeated strings are stored once
        and long texts compressed unless ``compact=False`` (``compiler/compact.py``)."""
        from .serialize import to_json

        return to_json(self, indent=indent, compact=compact)

    @classmethod
    def from_json(cls, text: str) -> Exploration:
        """Read what ``to_json`` wrote (any older schema version, upgraded)."""
        from .serialize import from_json

        return from_json(text)

    def __repr__(self) -> str:
        n = len(self.compiles)
        breaks = len(self.graph_breaks)
        return (
            f"<Exploration {self.source} {self.target!r}: {n} compile{'s' * (n != 1)}, "
            f"{breaks} graph break{'s' * (breaks != 1)}>"
        )


def as_jsonable(value: Any) -> str:
    """Render an option value for ``Options.options`` (kept JSON-safe as text)."""
    return value if isinstance(value, str) else repr(value)

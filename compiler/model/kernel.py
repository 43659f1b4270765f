"""What Inductor generated: output code, its kernels, their Triton variants and lowered
stages, the fused schedule and the provenance maps."""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.model.base import _FROZEN, SourceLoc, StageError
from compiler.model.derived import DERIVED, Later
from compiler.model.graph import Graph


@dataclass(**_FROZEN)
class LoweredStage:
    """One stage Triton lowered a kernel to (``ttir``, ``ttgir``, ``llir``, ``ptx``,
    ``sass``): its text, or why it is missing."""

    stage: str
    text: str = ""
    error: str = ""
    derived: Later | None = field(default=None, compare=False, repr=False, metadata=DERIVED)

    @property
    def source_lines(self) -> tuple[int | None, ...]:
        """The 1-based ``Kernel.source`` line each line of ``text`` was lowered from (from
        TTIR/TTGIR ``loc``, LLVM debug info, PTX ``.loc``); None where unknown; () where
        nothing mapped it. Mapped on first read, through ``derived``: a model's hundreds
        of kernels cost a second of parsing that only an opened lowering pane needs
        (``compiler/gpu/lowered_lines.py``)."""
        if self.derived is None:
            return ()
        lines: tuple[int | None, ...] = self.derived.get()
        return lines


@dataclass(**_FROZEN)
class TritonVariant:
    """One compiled variant of a Triton kernel (autotuning compiles one per config).

    ``config`` holds the launch config (``num_warps``, ``num_stages`` and, for the
    chosen variant, the block sizes Inductor recorded); ``target`` is e.g.
    ``cuda sm90 warp32``; ``cache_key`` is its folder in Triton's cache. Together
    with the kernel source this is what it takes to lower the kernel again elsewhere.
    Only the chosen variant carries stage texts; the others are summaries whose stages
    say where their texts are (``compiler/gpu/triton_stages.py`` says why).
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
    derived: Later | None = field(default=None, compare=False, repr=False, metadata=DERIVED)

    @property
    def config(self) -> tuple[tuple[str, str], ...]:
        """The description read as ``key=value`` pairs (``BLOCK_M=64, num_warps=4``); ()
        where it is not that (a library call's), or for a choice built without a cache.
        Read on first use, through ``derived`` (``compiler/link/derive.py``)."""
        if self.derived is None:
            return ()
        pairs: tuple[tuple[str, str], ...] = self.derived.get()
        return pairs


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
    # schema 2.0: unique in its Compile: ``<OutputCode.key>/<name>`` (``ids.kernel_id``).
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
    derived: Later | None = field(default=None, compare=False, repr=False, metadata=DERIVED)

    @property
    def user_lines(self) -> tuple[SourceLoc, ...]:
        """The user source lines this kernel came from, each once, in order:
        ``user_stack``, then the source line of each post-grad node it ran
        (``post_grad_nodes``, ``source_nodes``); empty where torch recorded neither.
        Computed on first read, through ``derived`` (it parses the post-grad graph;
        ``compiler/link/user_code.py``)."""
        if self.derived is None:
            return ()
        lines: tuple[SourceLoc, ...] = self.derived.get()
        return lines


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

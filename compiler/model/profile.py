"""The user's own ``torch.profiler`` run, linked to the explored kernels
(``compiler.attach_profile``; schema 4.2)."""

from __future__ import annotations

from dataclasses import dataclass, field

from compiler.model.base import _FROZEN, SourceLoc


@dataclass(**_FROZEN)
class ProfiledKernel:
    """One kernel of the exploration as the user's profiler saw it run.

    ``kernel`` is the explored ``Kernel.id``; ``name`` the event name in the trace;
    ``total_us`` the summed duration of its ``events``; ``stack`` torch's own provenance
    where the trace carried it (torch 2.14's ``inductor_trace_handler``), else empty.
    """

    kernel: str
    name: str
    compile: str = ""
    module: str = ""
    events: int = 0
    total_us: float = 0.0
    stack: tuple[SourceLoc, ...] = ()


@dataclass(**_FROZEN)
class ProfiledPlace:
    """Time from the profiled run that belongs to one source line or one module: the
    summed time of the kernels that ran its code, each kernel at its innermost user lines
    (a kernel fused from several lines counts for each of them, so line times overlap). A
    kernel the output code calls at several lines (one per layer) counts at each call's
    own lines and module where its launches could be placed on them."""

    place: str
    total_us: float
    kernels: tuple[str, ...] = ()
    loc: SourceLoc | None = None


@dataclass(**_FROZEN)
class RegionCalls:
    """How often one compile's code (one cache entry) ran in the profiled run, and for how
    long (schema 4.4), from the ``Torch-Compiled Region: <compile id>`` event Dynamo records
    around each call of a cache entry's code.

    ``compile`` is the compile's ``Compile.key`` (torch's id where the exploration has no
    such compile); ``frame`` the key of the first compile of its frame in the run (one code
    object keeps its frame over its recompiles). ``total_us`` is the wall time of its
    calls, ``first_us`` that of the first (a fresh compile's first call also autotunes
    or records CUDA graphs), ``inner_us`` the part of ``total_us`` spent in other compiled
    regions it called (a graph break's resume function). ``backward_calls`` and
    ``backward_us``: AOTAutograd's ``CompiledFunctionBackward`` regions whose kernels are
    this compile's backward kernels.
    """

    compile: str
    frame: str
    calls: int
    total_us: float
    first_us: float = 0.0
    inner_us: float = 0.0
    backward_calls: int = 0
    backward_us: float = 0.0

    @property
    def later_mean_us(self) -> float:
        """The mean wall time of a call after the first (µs): the first call of a frame
        may compile what it calls (a resume function) or autotune, the later ones run.

        >>> RegionCalls(compile="0/0", frame="0/0", calls=3, total_us=10.0, first_us=6.0
        ...             ).later_mean_us
        2.0
        """
        return (self.total_us - self.first_us) / (self.calls - 1) if self.calls > 1 else 0.0


@dataclass(**_FROZEN)
class Profile:
    """A ``torch.profiler`` Chrome trace of the user's run, linked to the exploration.

    ``kernel_events`` counts the kernel events of the compiled regions (Inductor's C++
    kernels on a CPU, device kernels launched inside ``Torch-Compiled Region`` or
    ``CompiledFunctionBackward`` on a GPU); ``linked_events`` those linked to an explored
    kernel (library kernels such as cuBLAS's through the ``aten::`` op of the output
    code's library call that launched them); ``unlinked`` names the others (kernels of ops
    the output code does not call as library calls, or of compiles this exploration did
    not record) with their counts. ``outside_us`` is the
    device time of kernels outside compiled regions (eager code, the optimizer).
    ``regions``: how often each compile's code ran, and for how long.
    """

    path: str
    device: str = ""
    provenance: bool = False
    kernel_events: int = 0
    linked_events: int = 0
    total_us: float = 0.0
    outside_us: float = 0.0
    kernels: tuple[ProfiledKernel, ...] = ()
    unlinked: dict[str, int] = field(default_factory=dict)
    lines: tuple[ProfiledPlace, ...] = ()
    modules: tuple[ProfiledPlace, ...] = ()
    notes: tuple[str, ...] = ()
    # schema 4.4: each compile's calls in the run (``RegionCalls``), in the order first run
    regions: tuple[RegionCalls, ...] = ()

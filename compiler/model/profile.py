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

"""A compile, its metrics, and the Exploration that holds every compile of a capture."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from compiler.model.base import _FROZEN, CompileId, SourceLoc, StageError
from compiler.model.derived import DERIVED, Derived
from compiler.model.frame import Bytecode, GraphBreak, Guards, RecompileReason
from compiler.model.graph import Graph
from compiler.model.kernel import Autotuning, Kernel, OutputCode
from compiler.model.numerics import Numerics
from compiler.model.profile import Profile

if TYPE_CHECKING:
    from compiler.advise.findings import Finding


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
    # schema 2.0: unique in the Exploration: ``0/1``, or ``rank1:0/1`` on several ranks
    # (made by ``compiler.link.ids.compile_key``).
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
    # schema 4.3: also torch's whole config per compile, ``dynamo_config``, ``inductor_config``,
    # ``compiler_config`` (JSON texts of ``compilation_metrics``; ``compiler.config_of``)
    artifacts: dict[str, str] = field(default_factory=dict)
    errors: tuple[StageError, ...] = ()
    autotuning: tuple[Autotuning, ...] = ()
    # schema 3.0 (derived, compiler/link/user_code.py): for a resume function
    # (``torch_dynamo_resume_in_f_at_12``), where it resumes: line 12 of ``f`` in
    # ``filename``; None for every other compile.
    resumes: SourceLoc | None = None
    # schema 4.4: how many compiles before this one in the run carried the same compile id.
    # Newer torch numbers the compiles of each ``torch.compile(..., isolate_recompiles=True)``
    # region apart (pytorch #196495), so two regions' compiles can both be ``0/0``; the
    # trace reader keeps them apart and ``compile_key`` tells them apart (``0/0#2``).
    id_reused: int = 0

    @property
    def label(self) -> str:
        """``0/1 f`` style label for selectors (``0/0#2 f`` for the second compile that
        carried the id ``0/0``)."""
        again = f"#{self.id_reused + 1}" if self.id_reused else ""
        return f"{self.compile_id}{again} {self.code_name}".strip()

    @property
    def is_recompile(self) -> bool:
        """Whether this compile compiled a frame again: a guard failed (``recompile_reasons``)
        or the frame was compiled before (``N/k`` with k > 0; traces do not always carry
        the reasons). The one rule for "recompile" in the compiler and the explorer."""
        return bool(self.recompile_reasons) or (self.compile_id.frame_compile_id or 0) > 0

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
    # schema 4.1: the mean compiled call (recordings are rare and long: the median hides
    # them), and what one CUDA graph recording or warm-up adds to a call, measured.
    compiled_mean_ms: float | None = None
    recording_ms: float | None = None
    warmup_ms: float | None = None
    # each timed compiled call, in order: its time and the CUDA graph events it logged
    # ("recording", "warmup", comma-joined; "" for none)
    compiled_calls_ms: tuple[float, ...] = ()
    compiled_call_events: tuple[str, ...] = ()

    @property
    def speedup(self) -> float:
        """Eager time over compiled time: above 1 when compiling paid off."""
        return self.eager_ms / self.compiled_ms if self.compiled_ms else float("inf")


@dataclass(**_FROZEN)
class Fix:
    """A change the explorer can make itself and compile again with (``compiler.remedy``).

    ``kind`` is ``no_grad``, ``inference_mode``, ``dynamic`` (``dynamic=True``),
    ``dynamo_config`` (``name`` a ``torch._dynamo.config`` set or flag, ``value`` what to add
    or set, as text: ``logging.Logger.warning_once``, ``True``) or ``backend`` (``value`` the
    backend); ``code`` is the same change as the user would write it.

    Example:
        >>> Fix(kind="no_grad", code="with torch.no_grad():").kind
        'no_grad'
    """

    kind: str
    name: str = ""
    value: str = ""
    code: str = ""


@dataclass(**_FROZEN)
class RunFigures:
    """What one compiled run of the target cost: counted from its Exploration, and the
    median time of a warm call in milliseconds (None where it was not measured)."""

    graph_breaks: int = 0
    graphs: int = 0
    compiles: int = 0
    recompiles: int = 0
    ms: float | None = None


@dataclass(**_FROZEN)
class TriedFix:
    """A fix the explorer applied to the user's target in a fresh compile, before and after.

    ``before`` is the target as the user compiled it, run again beside ``after`` in the
    same process; ``error`` says why the fixed run failed (then ``after`` is empty).
    """

    fix: Fix
    before: RunFigures
    after: RunFigures
    device: str = ""
    error: str = ""


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
    # schema 4.1: fixes the explorer applied and measured (``compiler.remedy.try_fixes``).
    tried_fixes: tuple[TriedFix, ...] = ()
    # schema 4.2: the user's own profiler trace, linked (``compiler.attach_profile``).
    profile: Profile | None = None
    # schema 4.3: compiled against eager node by node (``compiler.numerics``).
    numerics: Numerics | None = None
    unknown_keys: tuple[str, ...] = ()
    # what is judged from the whole exploration on first read (findings, divergence):
    # the index, the findings pane and the report each ask. Not an init field, so
    # ``dataclasses.replace`` starts the new exploration with an empty cache.
    derived: Derived = field(
        default_factory=Derived, init=False, compare=False, repr=False, metadata=DERIVED
    )

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
        """Compiles of a frame compiled before (``Compile.is_recompile``)."""
        return tuple(c for c in self.compiles if c.is_recompile)

    def findings(self) -> tuple[Finding, ...]:
        """The advisor's ranked diagnosis of this exploration, most important first; the
        advisor runs on the first call, later calls return the same tuple. It never raises:
        where the advisor's own code fails, there are no findings and ``stage_errors()``
        holds an ``advisor`` error with the traceback."""
        found: tuple[Finding, ...] = self._diagnosis()[0]
        return found

    def stage_errors(self) -> tuple[StageError, ...]:
        """Every stage that failed: the capture's ``errors``, then the advisor's (it runs
        now if it has not yet), which is judged on first read and so is not in ``errors``.

        Example:
            >>> Exploration(source="live").stage_errors()
            ()
        """
        return (*self.errors, *self._diagnosis()[1])

    def _diagnosis(self) -> tuple[tuple[Finding, ...], tuple[StageError, ...]]:
        def diagnosed() -> tuple[tuple[Finding, ...], tuple[StageError, ...]]:
            from compiler.advise.diagnose import diagnose

            try:
                return diagnose(self), ()
            except Exception as exc:  # a rule of ours that fails must not reach the user
                return (), (StageError.caught("advisor", exc),)

        found: tuple[tuple[Finding, ...], tuple[StageError, ...]] = self.derived.named(
            "findings", diagnosed
        ).get()
        return found

    def to_json(self, *, indent: int | None = None, compact: bool = True) -> str:
        """Serialize losslessly, schema version first; repeated strings are stored once
        and long texts compressed unless ``compact=False`` (``compiler/store/compact.py``)."""
        from compiler.store.serialize import to_json

        return to_json(self, indent=indent, compact=compact)

    @classmethod
    def from_json(cls, text: str) -> Exploration:
        """Read what ``to_json`` wrote (any older schema version, upgraded)."""
        from compiler.store.serialize import from_json

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

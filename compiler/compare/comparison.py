"""``compare``: the "compile and compare" lab as one call.

Runs a target eagerly and under several torch.compile configurations and measures, for
each: the first call (compile included), the steady state per call (after warm-up:
median and spread of repeated calls, synchronised on GPU), the speedup over eager, and
how many compiles, recompiles and graph breaks it took, each row with the Exploration
that recorded its compiles. ``explorer.compile_log`` writes the lab's compile log.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from compiler import _compat
from compiler.capture.observe import Observation, observe
from compiler.capture.recording import environment, recording
from compiler.capture.spec import CompileSpec, describe_target
from compiler.errors import InputError, OptionError
from compiler.measure.timed_calls import synchroniser, time_calls
from compiler.model import Environment, Exploration

__all__ = ["PRESETS", "CompareProgress", "CompareRow", "Comparison", "Config", "compare"]


@dataclass(frozen=True, slots=True, init=False)
class Config:
    """One named way to run the target: a ``CompileSpec`` (``backend=None`` runs it
    eagerly) and whether it needs CUDA. The spec's fields may be given instead of ``spec``,
    and read on the config (``config.mode``), as before the spec existed.

    Example:
        >>> Config(name="fast", mode="max-autotune").spec == Config(
        ...     name="fast", spec=CompileSpec(mode="max-autotune")).spec
        True
    """

    name: str
    spec: CompileSpec
    cuda_only: bool

    def __init__(
        self, name: str, spec: CompileSpec | None = None, *, cuda_only: bool = False,
        **spec_fields: Any,
    ) -> None:  # fmt: skip
        if spec is not None and spec_fields:
            msg = f"Config {name!r}: give spec= or its fields ({', '.join(spec_fields)}), not both."
            raise TypeError(msg)
        object.__setattr__(self, "name", name)
        given = spec if spec is not None else CompileSpec.of(**spec_fields)
        object.__setattr__(self, "spec", given)
        object.__setattr__(self, "cuda_only", cuda_only)

    def __getattr__(self, name: str) -> Any:
        if name in CompileSpec.names():
            return getattr(self.spec, name)
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    def describe(self) -> str:
        """``torch.compile(backend="inductor", mode="max-autotune")`` or ``eager``."""
        return self.spec.describe()


PRESETS: dict[str, Config] = {
    c.name: c
    for c in (
        Config(name="eager", backend=None),
        Config(name="aot_eager", backend="aot_eager"),
        Config(name="default"),
        Config(name="dynamic", dynamic=True),
        Config(name="static", dynamic=False),
        Config(name="reduce-overhead", mode="reduce-overhead", cuda_only=True),
        Config(name="max-autotune", mode="max-autotune", cuda_only=True),
        Config(name="max-autotune-no-cudagraphs", mode="max-autotune-no-cudagraphs"),
    )
}
# What compare() runs without configs=: the modes that matter where they apply
# (CUDA graphs and Triton autotuning need a GPU; CPU max-autotune compiles for minutes).
_DEFAULT_CPU = ("aot_eager", "default", "dynamic")
_DEFAULT_CUDA = (
    "aot_eager", "default", "dynamic", "reduce-overhead", "max-autotune",
    "max-autotune-no-cudagraphs",
)  # fmt: skip


@dataclass(frozen=True, kw_only=True, slots=True)
class CompareProgress:
    """Where ``compare`` is: config ``index`` of ``total``, its step and how far it got."""

    config: str
    index: int
    total: int
    step: str  # "first call", "warm-up", "timing", "done", "failed"
    done: int = 0
    of: int = 0

    def __str__(self) -> str:
        count = f" {self.done}/{self.of}" if self.of else ""
        return f"[{self.index + 1}/{self.total}] {self.config}: {self.step}{count}"


@dataclass(frozen=True, kw_only=True, slots=True)
class CompareRow:
    """One configuration's measurements. Times in milliseconds; ``spread_ms`` is the
    (min, max) of the timed calls; ``speedup`` is eager's median over this median."""

    config: Config
    first_call_ms: float | None = None
    median_ms: float | None = None
    spread_ms: tuple[float, float] | None = None
    speedup: float | None = None
    compiles: int = 0
    recompiles: int = 0
    graph_breaks: int = 0
    matches_eager: bool | None = None
    exploration: Exploration | None = None
    error: str = ""

    @property
    def name(self) -> str:
        """The configuration's name (``default``, ``max-autotune``, ...)."""
        return self.config.name


@dataclass(frozen=True, kw_only=True, slots=True)
class Comparison:
    """Every configuration's row, eager first, and where they were measured."""

    target: str
    inputs: tuple[str, ...]
    steps: int
    warmup: int
    rows: tuple[CompareRow, ...]
    environment: Environment
    threads: int = 0
    notes: tuple[str, ...] = ()

    def row(self, name: str) -> CompareRow:
        """The row of configuration ``name``; ``KeyError`` if it was not run."""
        for r in self.rows:
            if r.name == name:
                return r
        raise KeyError(f"no configuration {name!r} (ran: {', '.join(r.name for r in self.rows)})")

    def __repr__(self) -> str:
        best = min(
            (r for r in self.rows if r.median_ms is not None and r.config.spec.backend is not None),
            key=lambda r: r.median_ms or 0.0,
            default=None,
        )
        tail = ""
        if best is not None and best.speedup:
            tail = f", fastest compiled: {best.name} {best.speedup:.2f}x"
        return f"<Comparison {self.target!r}: {len(self.rows)} configurations{tail}>"


def compare(
    target: Callable[..., Any],
    *inputs: Any,
    configs: Sequence[Config | str] | None = None,
    steps: int = 20,
    warmup: int = 3,
    record: bool = True,
    progress: Callable[[CompareProgress], None] | None = None,
) -> Comparison:
    """Time ``target(*inputs)`` eagerly and under several torch.compile configurations.

    Args:
        target: a function or ``nn.Module`` (not yet compiled).
        *inputs: its example inputs.
        configs: ``Config`` objects or preset names (``"aot_eager"``, ``"default"``,
            ``"dynamic"``, ``"static"``, ``"reduce-overhead"``, ``"max-autotune"``,
            ``"max-autotune-no-cudagraphs"``) or a backend name from
            ``torch.compiler.list_backends()``. Default: the ones that apply on this
            device. Eager always runs first, as the baseline.
        steps: timed calls per configuration, after ``warmup`` untimed ones.
        record: record every compile as an Exploration (the row's link); the first
            call then includes the recording's own cost. Either way the FX graph and
            AOTAutograd caches are off (unless a config's spec keeps them), so every first
            call is a real compile.
        progress: called with a ``CompareProgress`` as it goes.

    All of it is one observation (``compiler.capture.observe``), with no process-wide
    reset: each configuration compiles beside what the process compiled before (a backend
    of its own) and its cache entries are dropped after its calls, so the user's compiled
    functions keep theirs and do not compile again. While ``record`` is on, capture also
    adds log handlers, a bytecode hook and a few config flags for each configuration and
    restores them after. Not switched (its calls are timed, and the switch costs a little
    per call): compiled functions the target calls itself run from their own entries, and
    torch's mark on a target whose earlier compile failed stays (it then runs eagerly in
    every row). The state the calls touch (parameters, buffers, optimizer and scheduler
    state, RNG: ``compiler.capture.state``) is saved before each configuration and
    restored after it, so each starts from the same state and the target ends as it was.
    A failure of the explorer's own work (recording, restoring) is in ``notes``.

    Returns:
        A ``Comparison``; a configuration that fails gets a row with ``error`` set, one
        that torch.compile would refuse the error of ``CompileSpec.check``.

    Raises:
        InputError: the target fails eagerly on these inputs.
        OptionError: an unknown preset or backend name, or a compiled target.

    Example:
        >>> import torch, compiler
        >>> c = compiler.compare(torch.nn.Linear(8, 8), torch.randn(4, 8),
        ...                      configs=["aot_eager"], steps=5)
        >>> [r.name for r in c.rows]
        ['eager', 'aot_eager']
    """
    import torch

    if _compat.is_compiled(target):
        msg = (
            "compare() compiles the target itself under each configuration: pass the "
            "function or module before torch.compile (for a module, its ._orig_mod)."
        )
        raise OptionError(msg)
    if steps < 1 or warmup < 0:
        msg = f"steps must be at least 1 and warmup at least 0 (got {steps}, {warmup})."
        raise OptionError(msg)
    tensors = [x for x in inputs if isinstance(x, torch.Tensor)]
    # A target without tensor inputs (a notebook cell reading its globals) may still
    # run on the GPU: synchronise whenever one is there.
    cuda = any(x.is_cuda for x in tensors) if tensors else torch.cuda.is_available()
    chosen = _resolve(configs, cuda)
    report = progress or (lambda _: None)
    rows: list[CompareRow] = []
    eager_out: Any = None
    notes = []
    skipped = [c.name for c in chosen if c.cuda_only and not cuda]
    if skipped:
        notes.append(f"skipped on this device (they need CUDA): {', '.join(skipped)}")
    chosen = [c for c in chosen if not (c.cuda_only and not cuda)]
    with observe(target, inputs, isolate=False) as obs:
        for index, config in enumerate(chosen):
            step = _Reporter(report, config.name, index, len(chosen))
            with obs.extra_calls() as saved:
                if index == 0 and saved is not None and (saved.modules or saved.optimizers):
                    notes.append("each configuration's calls start from the same state: "
                                 f"{saved.describe()}")  # fmt: skip
                try:
                    row, out = _measure(target, inputs, config, steps, warmup, record, cuda,
                                        step, obs)  # fmt: skip
                except Exception as exc:
                    if config.spec.backend is None:
                        msg = (
                            f"{describe_target(target)} fails eagerly on these inputs: "
                            f"{type(exc).__name__}: {exc}. Fix it so that it runs without "
                            "torch.compile."
                        )
                        raise InputError(msg) from exc
                    step("failed")
                    first = (str(exc).strip().splitlines() or [""])[0]
                    explored = getattr(exc, "exploration", None)
                    rows.append(
                        CompareRow(config=config, error=f"{type(exc).__name__}: {first}",
                                   exploration=explored)
                    )  # fmt: skip
                    continue
            if config.spec.backend is None:
                eager_out = out
            else:
                row = dataclasses.replace(row, matches_eager=_same(eager_out, out))
            rows.append(row)
            step("done")
    notes.extend(f"{e.message} ({e.stage})" for e in obs.boundary.take())
    noisy = [r.name for r in rows if r.spread_ms and r.spread_ms[0] > 0
             and r.spread_ms[1] / r.spread_ms[0] > 10]  # fmt: skip
    if noisy:
        notes.append(
            f"calls of {', '.join(noisy)} varied more than 10x between the fastest and the "
            "slowest: the machine was busy, so compare medians with care (on a shared CPU, "
            "torch.set_num_threads(1) avoids threads waiting for each other)"
        )
    eager = rows[0].median_ms
    rows = [
        dataclasses.replace(r, speedup=eager / r.median_ms) if eager and r.median_ms else r
        for r in rows
    ]
    return Comparison(
        target=describe_target(target),
        inputs=tuple(_describe_input(x) for x in inputs),
        steps=steps,
        warmup=warmup,
        rows=tuple(rows),
        environment=environment("cuda" if cuda else "cpu"),
        threads=torch.get_num_threads(),
        notes=tuple(notes),
    )


class _Reporter:
    def __init__(self, report: Callable[[CompareProgress], None], name: str, i: int, n: int):
        self.report, self.name, self.index, self.total = report, name, i, n

    def __call__(self, step: str, done: int = 0, of: int = 0) -> None:
        self.report(
            CompareProgress(
                config=self.name, index=self.index, total=self.total, step=step, done=done, of=of
            )
        )


def _resolve(configs: Sequence[Config | str] | None, cuda: bool) -> list[Config]:
    import torch

    names: Sequence[Config | str] = configs or (_DEFAULT_CUDA if cuda else _DEFAULT_CPU)
    backends = set(torch.compiler.list_backends(exclude_tags=()))
    result = [PRESETS["eager"]]
    for item in names:
        if isinstance(item, Config):
            config = item
        elif item in PRESETS:
            config = PRESETS[item]
        elif item in backends:
            config = Config(name=item, backend=item)
        else:
            known = ", ".join([*PRESETS, *sorted(backends - set(PRESETS))])
            raise OptionError(f"unknown configuration {item!r}. Known: {known}.")
        if config.name not in {c.name for c in result}:
            result.append(config)
    return result


@contextlib.contextmanager
def _maybe_recording(record: bool, keep_caches: bool, obs: Observation) -> Iterator[Any]:
    if record:
        with recording(decompile=False, keep_caches=keep_caches, boundary=obs.boundary) as rec:
            yield rec
        return
    if keep_caches:
        yield None
        return
    # Caches off as under recording(), so that the first call is a real compile.
    with _compat.patched_configs({"fx_graph_cache": False}, {"enable_autograd_cache": False}):
        yield None


def _measure(
    target: Callable[..., Any],
    inputs: tuple[Any, ...],
    config: Config,
    steps: int,
    warmup: int,
    record: bool,
    cuda: bool,
    step: _Reporter,
    obs: Observation,
) -> tuple[CompareRow, Any]:

    spec = config.spec if config.spec.backend is None else config.spec.check()
    # compiled beside the user's compiles, and its cache entries dropped after its calls
    run = obs.compiled(spec, target)

    def tell(phase: str, i: int) -> None:
        if phase == "first call":
            step(phase)
        elif phase == "warm-up":
            step(phase, i + 1, warmup)
        elif i % max(1, steps // 10) == 0:
            step(phase, i, steps)

    try:
        recorded = _maybe_recording(record and spec.backend is not None, spec.keep_caches, obs)
        with recorded as rec:
            if rec is not None:
                rec.target = describe_target(target)
            times = time_calls(
                lambda: run(*inputs), warmup=warmup, runs=steps, sync=synchroniser(cuda),
                first=True, before=tell,
            )  # fmt: skip
    finally:
        obs.evict(run)
    exploration = rec.exploration() if rec is not None else None
    row = CompareRow(
        config=config,
        first_call_ms=times.first_ms,
        median_ms=times.median_ms,
        spread_ms=times.spread_ms,
        compiles=len(exploration.compiles) if exploration else 0,
        recompiles=len(exploration.recompiles) if exploration else 0,
        graph_breaks=len(exploration.graph_breaks) if exploration else 0,
        exploration=exploration,
    )
    return row, _detached(times.first_result)


def _detached(out: Any) -> Any:
    import torch

    if isinstance(out, torch.Tensor):
        return out.detach().clone()
    if isinstance(out, tuple | list):
        return type(out)(_detached(o) for o in out)
    return out


def _same(expected: Any, actual: Any) -> bool | None:
    """Whether the outputs agree within float tolerance; None where they are not tensors."""
    import torch

    if isinstance(expected, torch.Tensor) and isinstance(actual, torch.Tensor):
        if expected.shape != actual.shape or expected.dtype != actual.dtype:
            return False
        if not expected.is_floating_point():
            return bool(torch.equal(expected, actual))
        return bool(torch.allclose(expected, actual, rtol=1e-3, atol=1e-4))
    if isinstance(expected, tuple | list) and isinstance(actual, tuple | list):
        if len(expected) != len(actual):
            return False
        results = [_same(e, a) for e, a in zip(expected, actual, strict=True)]
        known = [r for r in results if r is not None]
        return all(known) if known else None
    return None


def _describe_input(value: Any) -> str:
    import torch

    if isinstance(value, torch.Tensor):
        dtype = str(value.dtype).removeprefix("torch.")
        return f"{dtype}[{', '.join(map(str, value.shape))}] {value.device}"
    return type(value).__name__


def cpu_count() -> int:
    """CPUs this process may use (what the log reports beside torch's thread count)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 0

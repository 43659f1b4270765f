"""The kernel lab: a Triton kernel of a capture lowered again, edited or not, on a
machine without a GPU.

Lowering runs in ``compiler.lab.worker``, a warm worker process (``compiler.worker``): a
crash of Triton's native compiler or a hang costs a respawn (after ``timeout_s``), never
the caller's process, and Triton's import and first-compile cost are paid once per
process, not per edit.

Example:
    >>> import compiler
    >>> exp = compiler.Exploration.from_json(open("notebooks/recordings/pointwise.json").read())
    >>> kernel = next(k for c in exp.compiles for k in c.kernels() if k.language == "triton")
    >>> v = compiler.relower(kernel, config={"XBLOCK": 1024})  # doctest: +SKIP
    >>> v.registers, v.diff("ptx").changed  # doctest: +SKIP
    (20, True)
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import threading
import time
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from compiler.gpu.lowered_lines import with_source_lines
from compiler.lab.compare import ptx_instructions, stage_diff, versions_note
from compiler.lab.request import captured_variant, request
from compiler.lab.variant import LabError, LoweringDiff, Relowered, TritonMissingError
from compiler.model import Derived, Kernel, LoweredStage
from compiler.worker.process import START_TIMEOUT_S, Failure, Workers

TIMEOUT_S = 60.0
STAGES = ("ttir", "ttgir", "llir", "ptx", "sass")


def triton_available() -> bool:
    """Whether Triton is installed (the lab's one optional dependency)."""
    return importlib.util.find_spec("triton") is not None


class KernelLab:
    """Lowers Triton kernels in a warm worker process, one request at a time.

    Example:
        >>> lab = KernelLab(timeout_s=30)
        >>> lab.close()
    """

    def __init__(self, *, timeout_s: float = TIMEOUT_S) -> None:
        self.timeout_s = timeout_s
        # started on the first request (or ``start``), and after a failure on the next
        self._workers = Workers("compiler.lab.worker", start_timeout=START_TIMEOUT_S)
        self._lock = threading.Lock()

    def start(self) -> None:
        """Start the worker now (it takes seconds), so the first edit need not wait."""
        if not triton_available():
            raise TritonMissingError()
        with self._lock:
            self._workers.start()

    def relower(
        self,
        kernel: Kernel,
        source: str | None = None,
        config: Mapping[str, object] | None = None,
        target: str | int | None = None,
        *,
        sass: bool = False,
    ) -> Relowered:
        """``kernel`` lowered again (see ``compiler.relower``)."""
        if not triton_available():
            raise TritonMissingError()
        req = {**request(kernel, source, config, target), "sass": sass}
        started = time.perf_counter()
        with self._lock:
            reply = self._ask(req)
        if not reply.get("ok"):
            raise LabError(str(reply["message"]), kind=str(reply["kind"]), line=reply.get("line"))
        return _relowered(kernel, req, reply, time.perf_counter() - started)

    def _ask(self, req: dict[str, Any]) -> dict[str, Any]:
        reply = self._workers.ask(req, self.timeout_s)
        if not isinstance(reply, Failure):
            return reply
        if reply.kind == "start":
            msg = "the kernel lab worker did not start: is Triton importable?"
            raise LabError(msg, kind="crash")
        if reply.kind == "timeout":
            msg = (f"lowering {req['name']} took over {self.timeout_s:.0f} s and was stopped; "
                   "the next request starts a fresh worker.")  # fmt: skip
            raise LabError(msg, kind="timeout")
        msg = (f"Triton's compiler crashed lowering {req['name']} (its worker process "
               "died); the next request starts a fresh worker.")  # fmt: skip
        raise LabError(msg, kind="crash")

    def close(self) -> None:
        """Stop the worker; a later request starts a fresh one."""
        with self._lock:
            self._workers.close()
            self._workers = Workers("compiler.lab.worker", start_timeout=START_TIMEOUT_S)


@functools.cache
def shared_lab() -> KernelLab:
    """The process's one lab, which ``compiler.relower`` and the widget share: a warm
    worker is what makes a re-lowering take a fraction of a second."""
    lab = KernelLab()
    atexit.register(lab.close)
    return lab


def relower(
    kernel: Kernel,
    source: str | None = None,
    config: Mapping[str, object] | None = None,
    target: str | int | None = None,
    *,
    sass: bool = False,
) -> Relowered:
    """Lower a Triton kernel of a capture again: edited ``source`` (the whole kernel
    module, as ``Kernel.source``), ``config`` changes (``{"XBLOCK": 1024, "num_warps":
    4}``; the rest stays as recorded) or another ``target`` (``"sm_80"``); none of them
    reproduces the captured stages.

    Args:
        kernel: a Triton kernel of an Exploration, live or from a recording.
        source: the edited kernel source; ``kernel.source`` when None.
        config: launch-config values to change; the recorded config when None.
        target: a compute capability, ``"sm_80"``, ``"sm_90"`` or ``90``; the captured one
            when None.
        sass: disassemble the cubin too (``cuobjdump -sass``, 0.6-0.8 s more here); the
            SASS stage says it was not disassembled otherwise. A second call with
            ``sass=True`` lowers from the worker's Triton cache: it pays for SASS only.

    Returns:
        A ``Relowered`` variant: the five stages with line maps, ptxas's registers,
        spills and shared memory, and each stage's diff against the captured stage.

    Raises:
        LabError: the edited kernel does not lower (``line`` points at the kernel
            source line Triton or Python named), or the compiler crashed or hung.
        TritonMissingError: Triton is not installed; the message gives the pip command.

    Example:
        >>> import compiler
        >>> exp = compiler.Exploration.from_json(open("notebooks/recordings/pointwise.json").read())
        >>> k = next(k for c in exp.compiles for k in c.kernels() if k.language == "triton")
        >>> compiler.relower(k).reproduced  # doctest: +SKIP
        True
    """
    return shared_lab().relower(kernel, source, config, target, sass=sass)


def _relowered(kernel: Kernel, req: dict[str, Any], reply: dict[str, Any],
               seconds: float) -> Relowered:  # fmt: skip
    texts: dict[str, str] = reply["stages"]
    stages = [
        LoweredStage(stage=s, text=texts[s])
        if s in texts
        else LoweredStage(stage=s, error=f"Triton produced no {s}")
        for s in STAGES[:4]
    ]
    stages.append(reply["sass"])  # a LoweredStage (compiler.gpu.triton_stages.sass)
    captured = captured_variant(kernel)
    arch = int(req["arch"])
    stats = reply["ptxas"]
    variant = Relowered(
        hash=reply["hash"],
        config={k: str(v) for k, v in req["config"].items()},
        chosen=False,  # autotuning chose the captured variant, not this one
        target=f"cuda sm{arch} warp32",
        triton_version=reply["triton_version"],
        shared_memory=reply["shared"],
        stages=tuple(stages),
        source=str(req["source"]),
        registers=stats["registers"],
        spill_stores=stats["spill_stores"],
        spill_loads=stats["spill_loads"],
        stack_bytes=stats["stack_bytes"],
        static_shared=stats["static_shared"] or 0,
        ptxas_log=reply["ptxas_log"],
        captured_version=captured.triton_version if captured else "",
        diffs=_diffs(captured.stages if captured else (), stages),
        reproduced=_reproduced(captured.stages if captured else (), texts.get("ptx", "")),
        note=versions_note(captured, reply["triton_version"], arch),
        seconds=seconds,
    )
    # the same line maps as captured stages: the kernel's def line against the lowered
    # function's location (compiler/gpu/lowered_lines.py)
    mapped = with_source_lines(replace(kernel, source=variant.source, variants=(variant,)),
                               Derived())  # fmt: skip
    result = mapped.variants[0]
    assert isinstance(result, Relowered)
    return result


def _diffs(captured: tuple[LoweredStage, ...], new: list[LoweredStage]) -> tuple[LoweringDiff, ...]:
    old = {s.stage: s.text for s in captured}
    return tuple(stage_diff(s.stage, old.get(s.stage, ""), s.text) for s in new if s.text)


def _reproduced(captured: tuple[LoweredStage, ...], ptx: str) -> bool | None:
    old = next((s.text for s in captured if s.stage == "ptx" and s.text), "")
    if not old or not ptx:
        return None
    return ptx_instructions(old) == ptx_instructions(ptx)

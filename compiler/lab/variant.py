"""What a re-lowering returns: a Triton variant like the captured ones, with ptxas's
statistics and how its stages differ from the captured stages."""

from __future__ import annotations

from dataclasses import dataclass

from compiler.diff.parts import LineOp
from compiler.errors import ExploreError
from compiler.model import TritonVariant
from compiler.model.base import _FROZEN

INSTALL = "pip install 'torch-compile-explorer[triton]'"


@dataclass(**_FROZEN)
class LoweringDiff:
    """One stage lowered again, compared line by line with the captured stage.

    ``ops`` are ``difflib`` opcodes over (captured lines, new lines); lines are compared
    after ``compiler.parse.triton.ptx.comparable`` (file paths, PTX ``.version``, debug
    sections), so ``changed`` counts the lines an edit changed, not where files lay.
    ``captured`` is False where the kernel has no captured text of this stage.
    """

    stage: str
    ops: tuple[LineOp, ...] = ()
    added: int = 0
    removed: int = 0
    captured: bool = True

    @property
    def changed(self) -> bool:
        """Whether any compared line differs."""
        return self.added > 0 or self.removed > 0


@dataclass(**_FROZEN)
class Relowered(TritonVariant):
    """A Triton variant lowered again on this machine (``compiler.relower``).

    It is a ``TritonVariant`` (config, target, Triton version, shared memory, the five
    stages with their line maps) plus what only a fresh lowering knows: ptxas's report
    (``registers``, ``spill_stores``/``spill_loads`` in bytes, ``stack_bytes``,
    ``static_shared``, the raw ``ptxas_log``), the ``source`` that was lowered, a
    ``diffs`` entry per stage against the captured variant, and ``reproduced``: whether
    the PTX instructions equal the captured ones (None where nothing was captured).
    ``note`` says what the comparison ignored and which Triton versions lowered what.
    """

    source: str = ""
    registers: int | None = None
    spill_stores: int | None = None
    spill_loads: int | None = None
    stack_bytes: int | None = None
    static_shared: int = 0
    ptxas_log: str = ""
    captured_version: str = ""
    diffs: tuple[LoweringDiff, ...] = ()
    reproduced: bool | None = None
    note: str = ""
    seconds: float = 0.0

    def diff(self, stage: str) -> LoweringDiff | None:
        """The comparison of ``stage`` (``ptx``, ...) with the captured one, or None."""
        return next((d for d in self.diffs if d.stage == stage), None)


class LabError(ExploreError):
    """A kernel did not lower: ``kind`` is ``syntax``, ``exception``, ``triton``,
    ``kernel``, ``config``, ``timeout``, ``crash`` or ``missing``; ``line`` the 1-based
    ``Kernel.source`` line it points at, where known."""

    def __init__(self, message: str, *, kind: str, line: int | None = None) -> None:
        super().__init__(f"line {line}: {message}" if line else message, stage="lab")
        self.kind = kind
        self.line = line
        self.message = message


class TritonMissingError(LabError, ImportError):
    """Triton is not installed here: the lab needs it, nothing else does."""

    def __init__(self) -> None:
        super().__init__(
            "the kernel lab needs Triton to lower kernels on this machine, and it is not "
            f"installed: run {INSTALL} (it pins the Triton version the recordings were "
            "made with). Everything else works without it.",
            kind="missing",
        )

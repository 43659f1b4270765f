"""The one exception family that capture and loading raise."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from compiler.model import Exploration


class ExploreError(Exception):
    """Base of every error ``compiler`` raises on purpose.

    ``exploration`` holds whatever was captured before the failure (or None), so a
    compile that fails halfway still shows the stages it reached. ``stage`` names what
    failed, as the ``StageError`` recorded for it: ``dynamo`` (a graph break under
    ``fullgraph=True``), ``backend``, ``run`` (the code raised as torch.compile ran
    it), ``inputs`` (it fails eagerly too); empty where no stage applies.
    """

    def __init__(
        self, message: str, *, exploration: Exploration | None = None, stage: str = ""
    ) -> None:
        super().__init__(message)
        self.exploration = exploration
        self.stage = stage


class TargetError(ExploreError):
    """The target is not something ``explore`` can run (not callable, say)."""


class OptionError(ExploreError):
    """An unknown backend, mode or option, or options that contradict each other."""


class InputError(ExploreError):
    """The target fails with these inputs even without torch.compile."""


class CompileError(ExploreError):
    """torch.compile failed on the target (``fullgraph=True`` with a graph break, ...)."""


class TraceFormatError(ExploreError):
    """A trace file or directory is missing, unreadable or malformed."""


class SchemaVersionError(ExploreError):
    """A serialized Exploration is newer than this version of the package can read."""

"""The small values every stage shares: compile ids, source locations, stage errors and
the schema version."""

from __future__ import annotations

import re
from dataclasses import dataclass

# (major, minor): a new field with a default bumps minor; removing, renaming or
# retyping a field, or adding one without a default, bumps major.
SCHEMA_VERSION = (4, 4)

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
    """A stage that could not be captured or parsed, and why. Never fatal.

    ``traceback`` (schema 4.3): where the explorer's own code failed, as Python prints it,
    when the failure was ours (a hook, a parser, the profiler's linking, the advisor);
    empty for a stage torch did not produce.
    """

    stage: str
    message: str
    traceback: str = ""

    @classmethod
    def caught(cls, stage: str, exc: BaseException) -> StageError:
        """The error of a stage whose own code raised ``exc``: one sentence and the traceback.

        Example:
            >>> try:
            ...     [][0]
            ... except IndexError as exc:
            ...     error = StageError.caught("profile", exc)
            >>> error.message.split(";")[0]
            "the explorer's own profile step failed (IndexError: list index out of range)"
            >>> error.traceback.splitlines()[-1]
            'IndexError: list index out of range'
        """
        import traceback

        what = f"{type(exc).__name__}: {exc}".strip().splitlines()[0][:300]
        message = (
            f"the explorer's own {stage} step failed ({what}); your program ran as it would "
            "have without the explorer."
        )
        text = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
        return cls(stage=stage, message=message, traceback=text)

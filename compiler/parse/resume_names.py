"""The name Dynamo gives a resume function: the code it compiles for the rest of a frame
after a graph break, ``torch_dynamo_resume_in_<function>_at_<line>`` (torch 2.13:
``torch/_dynamo/resume_execution.py``). The one rule for "is this a resume function" and
where it resumes; a capture stores the answer as ``Compile.is_resume``."""

from __future__ import annotations

import re
from dataclasses import dataclass

_PREFIX = "torch_dynamo_resume_in_"
_NAME = re.compile(rf"^{_PREFIX}(?P<fn>.+)_at_(?P<line>\d+|None)$")


@dataclass(frozen=True, slots=True)
class ResumeName:
    """What a resume function's name says: the function whose frame the graph break
    split, and the line the rest of it starts at (None where the name gives no line:
    Dynamo writes ``_at_None`` when the resuming instruction has none)."""

    function: str
    line: int | None


def resume_name(code_name: str) -> ResumeName | None:
    """What ``code_name`` says as a resume function's name; None for any other code.

    Example:
        >>> resume_name("torch_dynamo_resume_in_forward_at_12")
        ResumeName(function='forward', line=12)
        >>> resume_name("torch_dynamo_resume_in_f_at_None")
        ResumeName(function='f', line=None)
        >>> resume_name("forward") is None
        True
    """
    if not code_name.startswith(_PREFIX):
        return None
    m = _NAME.match(code_name)
    if m is None:
        return ResumeName(function=code_name.removeprefix(_PREFIX), line=None)
    line = m["line"]
    return ResumeName(function=m["fn"], line=None if line == "None" else int(line))

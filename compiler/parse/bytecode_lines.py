"""The line table of ``dis`` text: which source line each printed line belongs to."""

from __future__ import annotations

import re

# "  12           0 LOAD_FAST ..." (3.11) or " 12     L1:   LOAD_FAST ..." (3.13): the
# source line number is the first column, written only where it changes.
_DIS_LINE = re.compile(r"^\s*(?P<line>\d+)\s+(?:-->\s+)?(?:>>\s+)?(?:\d+|L\d+:)\s+[A-Z]")


def dis_source_lines(text: str) -> tuple[int | None, ...]:
    """The source line of each line of ``text`` (split on ``\\n``), None where none.

    ``dis`` prints a line number only on the first instruction of each source line; the
    lines after it belong to the same source line until the next number, a blank line
    or a ``Disassembly of`` header.

    Example:
        >>> dis_source_lines("  3           0 RESUME 0\\n              2 LOAD_FAST 0 (x)\\n")
        (3, 3, None)
    """
    if not text:
        return ()
    out: list[int | None] = []
    current: int | None = None
    for line in text.split("\n"):
        m = _DIS_LINE.match(line)
        if m:
            current = int(m["line"])
        elif line.startswith("Disassembly of"):
            current = None
        out.append(current if line.strip() else None)
    return tuple(out)

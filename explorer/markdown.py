"""Markdown pieces shared by the reports (``explorer.report``): inline code and fenced
blocks that survive any backticks in torch's text, table cells, source locations, counts
and durations. One place, so every report spells them the same."""

from __future__ import annotations

import re

from compiler.model import SourceLoc

_BACKTICKS = re.compile(r"`+")


def code(text: str) -> str:
    """``text`` as one inline code span, whatever backticks it holds."""
    text = " ".join(str(text).splitlines())
    if not text:
        return "—"
    longest = max((len(run) for run in _BACKTICKS.findall(text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text[0] == "`" or text[-1] == "`" else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def block(text: str, *, indent: str = "") -> list[str]:
    """``text`` unchanged in a fenced block (the fence outgrows any inside it)."""
    longest = max((len(run) for run in re.findall(r"`{3,}", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [
        indent + fence + "text",
        *(indent + ln for ln in text.rstrip("\n").split("\n")),
        indent + fence,
    ]


def cell(text: str) -> str:
    """Make ``text`` safe inside a Markdown table cell."""
    return " ".join(text.splitlines()).replace("|", "\\|")


def loc(where: SourceLoc) -> str:
    text = code(str(where))
    if where.function:
        text += f" in {code(where.function)}"
    if where.code:
        text += f": {code(where.code.strip())}"
    return text


def us(value: float) -> str:
    return f"{value / 1000:.2f} ms" if value >= 1000 else f"{value:.1f} µs"


def first_line(text: str) -> str:
    return next((ln.strip() for ln in text.splitlines() if ln.strip()), "")


def count(n: int, noun: str) -> str:
    plural = noun + ("es" if noun.endswith(("s", "ss")) else "s")
    return f"{n} {noun if n == 1 else plural}"


def seconds(value: float | None) -> str:
    if value is None:
        return ""
    if value < 0.1:
        return f"{value * 1000:.1f} ms"
    return f"{value:.2f} s"

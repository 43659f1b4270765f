"""The user source lines an exploration involves, as tokenised windows of their files.

Read with ``linecache`` (which also knows IPython cells and files that exist on this
machine); when a file is not available, the function source recorded at capture or
the single lines recorded in the trace are shown instead, with a note saying so.
"""

from __future__ import annotations

import linecache
from typing import Any

from ._tokens import token_lines

CONTEXT = 3  # lines shown around each involved line
GAP = 8  # windows closer than this merge into one


def _windows(lines: list[int], last: int) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    for line in sorted(set(lines)):
        lo, hi = max(1, line - CONTEXT), min(last, line + CONTEXT)
        if out and lo <= out[-1][1] + GAP:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def sources_table(
    involved: dict[str, set[int]],
    recorded_code: dict[tuple[str, int], str],
    function_sources: dict[str, list[tuple[int, str]]],
    first: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """One entry per file: ``{filename, available, note, windows: [{start, lines}]}``.

    Args:
        involved: file name -> the line numbers some stage links to.
        recorded_code: (file, line) -> the stripped line text torch recorded.
        function_sources: file name -> (first line, source text) of captured functions.
        first: files listed first (those of the compiled frames).
    """
    files = []
    for filename in sorted(involved, key=lambda f: (f not in first, f)):
        wanted = sorted(involved[filename])
        text_lines = [ln.rstrip("\n") for ln in linecache.getlines(filename)]
        note = ""
        if text_lines:
            changed = [
                n
                for n in wanted
                if (filename, n) in recorded_code
                and n <= len(text_lines)
                and text_lines[n - 1].strip() != recorded_code[(filename, n)].strip()
            ]
            if changed:
                note = (
                    f"{filename} changed since the capture (line {changed[0]} differs "
                    "from what torch recorded); lines may not match."
                )
            windows = _windows(wanted, len(text_lines))
            files.append(
                _entry(filename, True, note, [(lo, text_lines[lo - 1 : hi]) for lo, hi in windows])
            )
            continue
        recorded = function_sources.get(filename)
        if recorded:
            windows = []
            for first, source in recorded:
                windows.append((first, source.split("\n")))
            note = (
                f"{filename} is not on this machine: showing the function source "
                "recorded at capture."
            )
            files.append(_entry(filename, False, note, sorted(windows)))
            continue
        note = (
            f"{filename} is not on this machine: showing only the lines torch recorded "
            "(put the file at this path to see it all)."
        )
        windows = [(n, [recorded_code.get((filename, n), "")]) for n in wanted]
        files.append(_entry(filename, False, note, windows))
    return files


def _entry(
    filename: str, available: bool, note: str, windows: list[tuple[int, list[str]]]
) -> dict[str, Any]:
    return {
        "filename": filename,
        "available": available,
        "note": note,
        "windows": [
            {"start": start, "lines": token_lines("\n".join(lines), "python")}
            for start, lines in windows
        ],
    }

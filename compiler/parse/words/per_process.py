"""The parts of torch's texts that differ between processes of one program: object ids
in guards (``___check_obj_id(L['self'], 140230...)``), addresses, the measured guard
latency, the pre-grad graph's ``graph id``, cache paths in output code, the rank's own
number in names. Masking them leaves what a rank compiled (shapes, ops, guard
conditions, kernel code)."""

from __future__ import annotations

import re

# object ids, addresses, measured guard latency: per process, never a divergence
_PER_PROCESS = re.compile(
    r"Guard latency = [^\n]*|0x[0-9a-fA-F]+|\b\d{9,}\b|graph id[^\n]*|/tmp/\S+|torchinductor_\S+"
)
# what two compiles of any two processes differ in that is no edit (a diff's lines)
_VOLATILE = re.compile(
    r"0x[0-9a-fA-F]+|\b\d{8,}\b|graph id: \d+|__compiled_fn_\d+(?:_[0-9a-f]{4,12}){5}"
)
# the rank's own number in names such as ``rank_1`` (process group names, file names)
_RANK_NAMES = re.compile(r"rank_?\d+")

# what ``_PER_PROCESS`` masks in guards that dropping digits leaves: the letters of
# addresses (torch 2.11 prints ``<code object forward at 0x3aba4480, ...>``) and the
# latency's line
_HEX = b"0123456789abcdefABCDEF"
_LATENCY = b"Guard latency = "


def normalized(text: str) -> str:
    """``text`` with what differs between processes of one program masked.

    Example:
        >>> normalized("___check_obj_id(L['self'], 140230112)")
        "___check_obj_id(L['self'], #)"
    """
    return _RANK_NAMES.sub("rank#", _PER_PROCESS.sub("#", text))


def between_processes(line: str) -> str:
    """``line`` with object ids, addresses and per-process graph ids blanked out: what
    a diff of two compiles ignores.

    Example:
        >>> between_processes("graph id: 140230112 at 0x7f3a")
        '# at #'
    """
    return _VOLATILE.sub("#", line)


def masked_guard_lines(lines: bytes) -> bytes:
    """Whole lines of a guard tree with addresses and the latency masked, by ``split``
    and ``find``: a regular expression over every byte of 160 MB of guards took seconds.
    (Object ids are digits: a caller that drops digits needs no more.)

    Example:
        >>> masked_guard_lines(b"code at 0x3aba4480, x\\nGuard latency = 1.2 us\\n")
        b'code at #, x\\n#\\n'
    """
    parts = lines.split(b"0x")
    if len(parts) > 1:
        lines = b"#".join([parts[0], *(part.lstrip(_HEX) for part in parts[1:])])
    at = lines.find(_LATENCY)
    while at >= 0:  # once a guard tree
        end = lines.find(b"\n", at)
        end = len(lines) if end < 0 else end
        lines = lines[:at] + b"#" + lines[end:]
        at = lines.find(_LATENCY, at + 1)
    return lines

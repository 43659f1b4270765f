"""The parts of torch's texts that differ between processes of one program: object ids
in guards (``___check_obj_id(L['self'], 140230...)``), addresses, the measured guard
latency, the pre-grad graph's ``graph id``, cache paths in output code, the rank's own
number in names, and the index of the rank's own device: on NCCL each rank runs on its
own GPU, so torch prints ``cuda:1`` in graphs (``f32[4, 32][32, 1]cuda:1``),
``device(type='cuda', index=1)`` in graph code, ``device=1`` in tensor guards,
``DeviceProperties(type='cuda', index=1, ...)``, ``torch.cuda._DeviceGuard(1)``,
``torch.cuda.set_device(1)`` and ``stream1 = get_raw_stream(1)`` in output code. Masking
them leaves what a rank compiled (shapes, ops, guard conditions, kernel code)."""

from __future__ import annotations

import re

# object ids, addresses, measured guard latency: per process, never a divergence
# (``Guard latency = ...``, ``0x...``, a word of 9 or more digits, ``graph id...``,
# ``/tmp/...``, ``torchinductor_...``). Each branch's first character is one class that
# the expression starts with, the rest checked behind it: Python's ``re`` then skips every
# other character at C speed, where an alternation led by ``\b`` tried every branch at
# every character (twice the time over a rank's graphs and output code).
_PER_PROCESS = re.compile(
    r"[G0-9g/t](?:(?<=G)uard latency = [^\n]*|(?<=0)x[0-9a-fA-F]+|(?<=\d)(?<!\w\d)\d{8,}\b"
    r"|(?<=g)raph id[^\n]*|(?<=/)tmp/\S+|(?<=t)orchinductor_\S+)"
)
# what two compiles of any two processes differ in that is no edit (a diff's lines)
_VOLATILE = re.compile(
    r"0x[0-9a-fA-F]+|\b\d{8,}\b|graph id: \d+|__compiled_fn_\d+(?:_[0-9a-f]{4,12}){5}"
)
# the rank's own number in names such as ``rank_1`` (process group names, file names)
_RANK_NAMES = re.compile(r"rank_?\d+")
# the index of the rank's own device, in every spelling torch 2.11-2.14 prints it (see
# the module's docstring): (its word, what follows the word before the index). An index
# only, so a device *type* that differs still shows; each spelling at a word's start.
_DEVICE_SPELLINGS = (
    ("cuda:", ""), ("xpu:", ""), ("hpu:", ""), ("mtia:", ""), ("mps:", ""),
    ("type='", r"\w+', index="), ("device=", ""), ("_DeviceGuard(", ""), ("set_device(", ""),
    ("get_raw_stream(", ""), ("cuda.device(", ""), ("stream", ""),
)  # fmt: skip
# All spellings in one expression, led by one character class, as ``_PER_PROCESS``, for
# whole lines as bytes (``masked_devices``)
_DEVICE = (
    "([cxhmtd_sg](?<!\\w[cxhmtd_sg])(?:"
    + "|".join(f"(?<={w[0]}){re.escape(w[1:])}{rest}" for w, rest in _DEVICE_SPELLINGS)
    + "))\\d+\\b"
)
_DEVICE_BYTES = re.compile(_DEVICE.encode())
_DEVICE_TEXT = re.compile(_DEVICE)
# The same, one expression a spelling, each led by its word, which ``re`` finds by a fast
# search where the one class stops at every c, t, s, d, ...: half the time over a rank's
# graphs and kernels (``normalized``). The same matches for text without
# ``stream``: at any one place at most one spelling fits, masking an index (digits
# followed by no letter) neither makes nor breaks another, and only ``stream1`` can sit
# inside ``type='...'``, which the one expression leaves whole.
_DEVICE_WORDS = tuple(
    (w, re.compile(f"({re.escape(w)})(?<!\\w{re.escape(w)})({rest})\\d+\\b"))
    for w, rest in _DEVICE_SPELLINGS
    if w != "stream"
)
# an object or type id that guards compare against: an address, however few its digits
# (``___check_obj_id(G['torch'].Tensor, 21790816)`` on torch 2.11, CUDA)
_OBJ_ID = re.compile(r"(___check_(?:obj|type)_id\([^\n]*?, )\d+")
# what every match of ``_PER_PROCESS`` holds: one of these texts, or nine digits in a row
_PER_PROCESS_TEXTS = ("Guard latency = ", "0x", "graph id", "/tmp/", "torchinductor_")
# every byte to a space but digits, to "0": nine digits in a row become b"000000000"
_ONLY_DIGITS = bytes(48 if 48 <= b <= 57 else 32 for b in range(256))
_NINE_DIGITS = b"000000000"

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
        >>> normalized("check_tensor(L['x'], torch.float32, device=1, size=[4, 32])")
        "check_tensor(L['x'], torch.float32, device=#, size=[4, 32])"
        >>> normalized("with torch.cuda._DeviceGuard(1): stream1 = get_raw_stream(1)")
        'with torch.cuda._DeviceGuard(#): stream# = get_raw_stream(#)'
    """
    masked = _per_process_masked(text)
    if "___check_" in masked:
        masked = _OBJ_ID.sub(r"\1#", masked)
    if "rank" in masked:
        masked = _RANK_NAMES.sub("rank#", masked)
    if "stream" in masked:  # output code: the one expression, as ``_DEVICE_WORDS`` says
        return _DEVICE_TEXT.sub(r"\1#", masked)
    for word, spelling in _DEVICE_WORDS:
        if word in masked:  # most spellings are in no text: ``in`` says so fastest
            masked = spelling.sub(r"\1\2#", masked)
    return masked


def _per_process_masked(text: str) -> str:
    """``_PER_PROCESS.sub("#", text)``, run on the lines that hold one of its texts or
    nine digits in a row only (found by ``str.find`` and ``bytes.translate``, at C speed):
    over a rank's graphs, guards and kernels the expression tried every digit and every
    g, t and / in vain. Exact, as no match spans a line and each line reads alone as
    inside the text (a line break before it, none inside)."""
    if not text.isascii():
        return _PER_PROCESS.sub("#", text)  # ``\d`` is any Unicode digit
    starts: list[int] = []
    for word in _PER_PROCESS_TEXTS:
        at = text.find(word)
        while at >= 0:
            starts.append(at)
            at = text.find(word, at + 1)
    digits = text.encode("ascii").translate(_ONLY_DIGITS)
    at = digits.find(_NINE_DIGITS)
    while at >= 0:
        starts.append(at)
        at = digits.find(_NINE_DIGITS, at + 9)
    if not starts:
        return text
    out: list[str] = []
    done = 0  # the text up to here is in ``out``
    for at in sorted(starts):
        if at < done:
            continue  # on a line already masked
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        out += (text[done:start], _PER_PROCESS.sub("#", text[start:end]))
        done = end
    out.append(text[done:])
    return "".join(out)


def masked_devices(lines: bytes) -> bytes:
    """Whole lines of a graph or output code with the rank's own device index masked,
    as ``normalized`` masks it: the outline's fingerprint of a graph every process of one
    program prints alike but for the device.

    Example:
        >>> masked_devices(b"f32[4, 32][32, 1]cuda:1; device(type='cuda', index=1)")
        b"f32[4, 32][32, 1]cuda:#; device(type='cuda', index=#)"
    """
    return _DEVICE_BYTES.sub(rb"\1#", lines)


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

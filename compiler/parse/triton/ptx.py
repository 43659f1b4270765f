"""PTX as Triton lowers it, read for comparing two lowerings of one kernel: its code
part (the lines before the DWARF debug sections), its lines with file paths as base names
and ``.version`` blanked (a device assert's ``assertFile`` global spells the module's
path out byte by byte), and its instructions (no ``.loc``/``.file``/``.version``, no
comments). ``compiler.lab.compare`` says why these differences are not code."""

from __future__ import annotations

import re

__all__ = ["code_part", "comparable", "ptx_instructions"]

_PATH = re.compile(r'"(?:[^"]*/)?(?P<base>[^"/]+\.(?:py|cubin|ptx))"')
_VERSION = re.compile(r"^\.version\s+\S+")
_DIRECTORY = re.compile(r'directory: "[^"]*"')
# a device assert's file name, as the PTX global the assert message points to: the kernel
# module's full path spelled out byte by byte (``assertFile_0[85] = {47, 116, ...}``)
_ASSERT_FILE = re.compile(
    r"^(?P<head>\.global \.align 1 \.b8 assertFile_\d+)\[\d+\] = \{(?P<bytes>[\d, ]*)\};"
)


def code_part(stage: str, text: str) -> list[str]:
    """The lines of ``text`` that are compared: all of them, but for PTX the lines
    before the first debug section."""
    lines = text.split("\n")
    if stage == "ptx":
        for i, line in enumerate(lines):
            if line.lstrip().startswith(".section") and ".debug" in line:
                return lines[:i]
    return lines


def _assert_file(m: re.Match[str]) -> str:
    path = bytes(int(b) for b in m["bytes"].split(",") if b.strip()).decode("utf-8", "replace")
    return f'{m["head"]} = "{path.rstrip(chr(0)).rsplit("/", 1)[-1]}";'


def comparable(line: str) -> str:
    """``line`` with file paths read as base names and ``.version`` blanked.

    Example:
        >>> comparable(".global .align 1 .b8 assertFile_0[6] = {47, 116, 47, 107, 46, 0};")
        '.global .align 1 .b8 assertFile_0 = "k.";'
    """
    line = _ASSERT_FILE.sub(_assert_file, line.strip()) if "assertFile_" in line else line
    line = _PATH.sub(lambda m: f'"{m["base"]}"', line)
    line = _DIRECTORY.sub('directory: ""', line)
    return _VERSION.sub(".version", line)


def ptx_instructions(ptx: str) -> list[str]:
    """The PTX lines that say what the GPU runs: no ``.loc``/``.file``/``.version``, no
    comments, no blank lines, nothing of the debug sections."""
    out = []
    for line in code_part("ptx", ptx):
        code = line.split("//", 1)[0].strip()
        if not code or code.startswith((".loc", ".file", ".version")):
            continue
        out.append(comparable(code) if "assertFile_" in code else code)
    return out

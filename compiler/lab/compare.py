"""A re-lowering compared with the captured stages.

Two lowerings of one kernel on two machines differ in what is not code: the folder of
the kernel's module file and of torch's ``triton_helpers.py`` (every ``loc(...)``,
``.file`` and debug string names them, and a device assert's ``assertFile`` global spells
the module's path out byte by byte), the PTX ISA ``.version`` (that of the ptxas
Triton bundles) and the DWARF debug sections at the end of the PTX, which spell those
paths out byte by byte. Lines of torch's ``triton_helpers.py`` move between torch
versions too (the recordings were made with torch 2.11). So the comparison reads file
paths as base names, blanks ``.version``, leaves the debug sections out, and calls a
kernel reproduced when its PTX *instructions* equal the captured ones: every PTX line
outside the debug sections that is not a ``.loc``/``.file`` directive or a comment.
"""

from __future__ import annotations

import difflib

from compiler.diff.parts import LineOp
from compiler.lab.variant import LoweringDiff
from compiler.model import TritonVariant
from compiler.parse.triton.ptx import code_part, comparable, ptx_instructions

__all__ = ["NORMALISED", "ptx_instructions", "stage_diff", "versions_note"]

NORMALISED = (
    "compared with file paths as base names, the PTX .version and the PTX debug sections "
    "left out; reproduced means equal PTX instructions (.loc/.file lines and comments aside)"
)


def stage_diff(stage: str, captured: str, new: str) -> LoweringDiff:
    """``new`` against ``captured``, line by line after ``comparable``."""
    if not captured:
        return LoweringDiff(stage=stage, captured=False)
    a = [comparable(x) for x in code_part(stage, captured)]
    b = [comparable(x) for x in code_part(stage, new)]
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    ops = tuple(LineOp(tag=t, a_start=i1, a_end=i2, b_start=j1, b_end=j2)
                for t, i1, i2, j1, j2 in matcher.get_opcodes())  # fmt: skip
    added = sum(op.b_end - op.b_start for op in ops if op.tag != "equal")
    removed = sum(op.a_end - op.a_start for op in ops if op.tag != "equal")
    return LoweringDiff(stage=stage, ops=ops, added=added, removed=removed)


def versions_note(captured: TritonVariant | None, version: str, arch: int) -> str:
    """Which Triton lowered the captured stages and which lowered these."""
    if captured is None:
        return f"lowered by Triton {version} for sm_{arch}; the kernel has no captured stages."
    if not captured.triton_version or captured.triton_version == version:
        return f"captured and re-lowered by Triton {version}; {NORMALISED}."
    return (f"captured by Triton {captured.triton_version} ({captured.target}), re-lowered by "
            f"Triton {version} for sm_{arch}: differences may come from the versions, not "
            f"from an edit; {NORMALISED}.")  # fmt: skip

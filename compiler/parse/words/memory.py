"""Words of torch's graph text about memory: which forward outputs are saved for the
backward (AOT output descriptors, torch 2.13 ``descriptors.py``), and how many bytes an
element of each printed dtype takes (``f32``, ``bf16``, ``b8``, as FX prints them).
"""

from __future__ import annotations

import math
import re

# FX's short dtype names (torch/fx/graph.py ``dtype_abbrs``) and their element sizes.
_ITEMSIZE = {"f64": 8, "f32": 4, "f16": 2, "bf16": 2, "c128": 16, "c64": 8, "c32": 4,
             "i64": 8, "i32": 4, "i16": 2, "i8": 1, "u64": 8, "u32": 4, "u16": 2, "u8": 1,
             "b8": 1, "f8e4m3fn": 1, "f8e5m2": 1, "f8e4m3fnuz": 1, "f8e5m2fnuz": 1,
             "f8e8m0fnu": 1}  # fmt: skip
_SAVED = re.compile(r"^SavedForBackwards(?:NoVcCheck)?AOTOutput\(idx=(?P<idx>\d+)\)$")
_INT = re.compile(r"^\d+$")


def itemsize(dtype: str) -> int | None:
    """Bytes per element of an FX-printed dtype, None for one this table lacks.

    >>> itemsize("bf16"), itemsize("b8"), itemsize("Sym")
    (2, 1, None)
    """
    return _ITEMSIZE.get(dtype)


def saved_index(desc: str) -> int | None:
    """The position among the saved tensors of a forward output that the backward
    receives, from its descriptor; None for any other output.

    >>> saved_index("SavedForBackwardsAOTOutput(idx=2)"), saved_index("PlainAOTOutput(idx=0)")
    (2, None)
    """
    m = _SAVED.match(desc)
    return int(m["idx"]) if m else None


def size_bytes(shape: tuple[str, ...], dtype: str) -> tuple[int | None, str]:
    """(bytes, the size as text) of a tensor of ``shape`` and ``dtype``: bytes is None
    where a dimension is symbolic (``s77``) or the dtype unknown; the text then keeps
    the symbols (``4096*s77``).

    >>> size_bytes(("8", "256"), "f32")
    (8192, '8192')
    >>> size_bytes(("s77", "64"), "f32")
    (None, '256*s77')
    """
    size = itemsize(dtype)
    known = [int(d) for d in shape if _INT.match(d)]
    symbols = [d for d in shape if not _INT.match(d)]
    factor = math.prod(known) * (size or 1)
    if size is None:
        symbols.append(f"sizeof({dtype})")
    if not symbols:
        return factor, str(factor)
    text = "*".join([str(factor), *symbols]) if factor != 1 else "*".join(symbols)
    return None, text

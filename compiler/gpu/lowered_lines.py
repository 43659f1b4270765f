"""Which line of a Triton kernel's source each line of its lowered stages came from.

``LoweredStage.source_lines`` is filled from the locations the compilers record (read by
``compiler.parse.triton.stage_locations``). ``cuobjdump -sass`` prints no line
information, so SASS lines stay None.

Those locations name the kernel's module file (``/tmp/torchinductor_*/xx/cxxx.py``),
not ``Kernel.source``. Inductor writes that file from the triple-quoted string of
``async_compile.triton('name', '''<newline>...''')``, which starts with a newline
that ``Kernel.source`` does not keep, so module line N is source line N - 1. Rather
than hard-code the -1, the offset is measured per variant: the line of ``def
<kernel>(`` in the source minus the line the compiler gives the kernel function (its
``tt.func`` location, LLVM ``DISubprogram`` or the first PTX ``.loc``).
"""

from __future__ import annotations

import functools
import os
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from compiler.model import Derived, Kernel, TritonVariant
from compiler.parse.triton.stage_locations import Loc, def_line_of, stage_locations

__all__ = ["STAGE_ORDER", "def_line_of", "with_source_lines"]

STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "sass")


def with_source_lines(k: Kernel, cache: Derived) -> Kernel:
    """``k`` with ``source_lines`` of every lowered stage of every variant mapped by
    ``cache`` when first read.

    Example:
        >>> k = Kernel(name="k", language="triton", source="def k(x):\\n    pass")
        >>> with_source_lines(k, Derived()) == k
        True
    """
    if not k.variants:
        return k
    def_line = def_line_of(k.source, k.name)
    return replace(k, variants=tuple(_variant(v, k, def_line, cache) for v in k.variants))


def _variant(v: TritonVariant, k: Kernel, def_line: int | None, cache: Derived) -> TritonVariant:
    """``v`` with every stage's ``source_lines`` mapped on first read: one read maps the
    whole variant, since the kernel's file and line offset come from all its stages."""

    @functools.cache
    def maps() -> tuple[tuple[int | None, ...], ...]:
        parsed = {s.stage: stage_locations(s.stage, s.text, k.name) for s in v.stages if s.text}
        func = next((parsed[s][1] for s in STAGE_ORDER if s in parsed and parsed[s][1]), None)
        kernel_file = func[0] if func else _most_common_file(parsed)
        offset = def_line - func[1] if func and def_line else 0
        n_source = k.source.count("\n") + 1
        out = []
        for s in v.stages:
            if s.stage in parsed and kernel_file:
                out.append(
                    tuple(
                        _source_line(c, kernel_file, offset, n_source) for c in parsed[s.stage][0]
                    )
                )
            else:
                out.append((None,) * (s.text.count("\n") + 1) if s.text else ())
        return tuple(out)

    def lines_of(i: int, text: str) -> Callable[[], tuple[int | None, ...]]:
        def lines() -> tuple[int | None, ...]:
            try:
                return maps()[i]
            except Exception:  # a line map is an aid: without one, the text still shows
                return (None,) * (text.count("\n") + 1) if text else ()

        return lines

    stages = tuple(
        replace(s, derived=cache.later("lowered_lines", lines_of(i, s.text)))
        for i, s in enumerate(v.stages)
    )
    return replace(v, stages=stages)


def _rank(stage: str) -> int:
    return STAGE_ORDER.index(stage) if stage in STAGE_ORDER else len(STAGE_ORDER)


def _most_common_file(parsed: dict[str, tuple[list[list[Loc]], Loc | None]]) -> str:
    counts: Counter[str] = Counter()
    for per_line, _ in parsed.values():
        for cands in per_line:
            for path, _line in cands[:1]:
                counts[path] += 1
    return counts.most_common(1)[0][0] if counts else ""


def _same_file(a: str, b: str) -> bool:
    if os.sep in a and os.sep in b:
        return os.path.normpath(a) == os.path.normpath(b)
    return os.path.basename(a) == os.path.basename(b)


def _source_line(cands: list[Loc], kernel_file: str, offset: int, n_source: int) -> int | None:
    """The first candidate location in the kernel's module, as a ``Kernel.source`` line."""
    for path, line in cands:
        if _same_file(path, kernel_file):
            n = line + offset
            return n if line > 0 and 1 <= n <= n_source else None
    return None

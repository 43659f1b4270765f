"""Which line of a Triton kernel's source each line of its lowered stages came from.

``LoweredStage.source_lines`` is filled from the locations the compilers record: MLIR
``loc(...)`` (with ``#locN`` aliases, names, call sites and fusions) in TTIR/TTGIR,
``!dbg`` / ``!DILocation`` in LLVM IR and ``.loc`` directives in PTX. ``cuobjdump
-sass`` prints no line information, so SASS lines stay None.

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
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import replace

from compiler.model import Derived, Kernel, LoweredStage, TritonVariant

STAGE_ORDER = ("ttir", "ttgir", "llir", "ptx", "sass")

Loc = tuple[str, int]  # (file path or base name, 1-based line; 0 means no line)


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


def def_line_of(source: str, name: str) -> int | None:
    """The 1-based line of ``def <name>(`` in ``source``."""
    m = re.search(rf"^def\s+{re.escape(name)}\s*\(", source, re.MULTILINE)
    return source.count("\n", 0, m.start()) + 1 if m else None


def _variant(v: TritonVariant, k: Kernel, def_line: int | None, cache: Derived) -> TritonVariant:
    """``v`` with every stage's ``source_lines`` mapped on first read: one read maps the
    whole variant, since the kernel's file and line offset come from all its stages."""

    @functools.cache
    def maps() -> tuple[tuple[int | None, ...], ...]:
        parsed = {s.stage: _locations(s, k.name) for s in v.stages if s.text}
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


def _locations(s: LoweredStage, kernel_name: str) -> tuple[list[list[Loc]], Loc | None]:
    """Candidate locations per line (innermost first) and the kernel function's location."""
    lines = s.text.split("\n")
    if s.stage in ("ttir", "ttgir"):
        return _mlir(lines)
    if s.stage == "llir":
        return _llvm(lines, kernel_name)
    if s.stage == "ptx":
        return _ptx(lines)
    return [[] for _ in lines], None


# --- MLIR (TTIR, TTGIR) ----------------------------------------------------------------

_ALIAS_DEF = re.compile(r"^(?P<alias>#loc\d*) = loc\((?P<expr>.*)\)\s*$")
_FILE_LOC = re.compile(r'^"(?P<file>(?:[^"\\]|\\.)*)":(?P<line>\d+)(?::\d+)?')
_NAME_LOC = re.compile(r'^"(?:[^"\\]|\\.)*"\((?P<inner>.*)\)$', re.DOTALL)


def _balanced(text: str, start: int) -> int:
    """Index just past the ``)`` matching the ``(`` at ``start`` (strings skipped)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


def _loc_exprs(line: str) -> list[str]:
    out = []
    for m in re.finditer(r"\bloc\(", line):
        open_at = m.end() - 1
        end = _balanced(line, open_at)
        out.append(line[open_at + 1 : end - 1])
    return out


def _split_top(text: str, sep: str) -> list[str]:
    parts, depth, i, last = [], 0, 0, 0
    while i < len(text):
        ch = text[i]
        if ch == '"':
            i += 1
            while i < len(text) and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[last:i])
            last = i + len(sep)
            i = last
            continue
        i += 1
    parts.append(text[last:])
    return parts


def _mlir_candidates(expr: str, aliases: dict[str, str], depth: int = 0) -> list[Loc]:
    expr = expr.strip()
    if depth > 64 or not expr or expr == "unknown":
        return []
    if expr.startswith("#loc"):
        target = aliases.get(expr)
        return _mlir_candidates(target, aliases, depth + 1) if target is not None else []
    m = _FILE_LOC.match(expr)
    if m:
        return [(m["file"], int(m["line"]))]
    if expr.startswith("callsite(") and expr.endswith(")"):
        parts = _split_top(expr[len("callsite(") : -1], " at ")
        return [c for p in parts for c in _mlir_candidates(p, aliases, depth + 1)]
    if expr.startswith("fused"):
        open_at = expr.find("[")
        if open_at < 0:
            return []
        inner = expr[open_at + 1 : expr.rfind("]")]
        return [c for p in _split_top(inner, ",") for c in _mlir_candidates(p, aliases, depth + 1)]
    m = _NAME_LOC.match(expr)
    if m:
        return _mlir_candidates(m["inner"], aliases, depth + 1)
    return []


def _mlir(lines: list[str]) -> tuple[list[list[Loc]], Loc | None]:
    aliases = {}
    for line in lines:
        m = _ALIAS_DEF.match(line)
        if m:
            aliases[m["alias"]] = m["expr"]
    per_line = []
    for line in lines:
        exprs = _loc_exprs(line)
        per_line.append(_mlir_candidates(exprs[-1], aliases) if exprs else [])
    func = None
    for i, line in enumerate(lines):
        if "tt.func" not in line:
            continue
        indent = len(line) - len(line.lstrip())
        for later in lines[i + 1 :]:
            if later.startswith(" " * indent + "} loc(") or later.startswith(
                " " * indent + "}loc("
            ):
                cands = _mlir_candidates(_loc_exprs(later)[-1], aliases)
                func = cands[-1] if cands else None
                break
        if func is None and per_line[i]:
            func = per_line[i][-1]
        break
    return per_line, func


# --- LLVM IR ---------------------------------------------------------------------------

_MD_DEF = re.compile(r"^(?P<id>!\d+) = (?:distinct )?!(?P<kind>\w+)\((?P<body>.*)\)\s*$")
_MD_FIELD = re.compile(r'(?P<key>\w+): (?P<value>"(?:[^"\\]|\\.)*"|[^,]+)')
_DBG = re.compile(r"!dbg (?P<id>!\d+)")


def _llvm(lines: list[str], kernel_name: str) -> tuple[list[list[Loc]], Loc | None]:
    md: dict[str, tuple[str, dict[str, str]]] = {}
    for line in lines:
        m = _MD_DEF.match(line)
        if m:
            fields = {f["key"]: f["value"].strip() for f in _MD_FIELD.finditer(m["body"])}
            md[m["id"]] = (m["kind"], fields)

    def file_of(scope: str | None, depth: int = 0) -> str:
        while scope and depth < 64:
            kind, fields = md.get(scope, ("", {}))
            if "file" in fields and kind != "DIFile":
                f = md.get(fields["file"], ("", {}))[1]
                name = f.get("filename", "").strip('"')
                directory = f.get("directory", "").strip('"')
                return os.path.join(directory, name) if directory else name
            scope = fields.get("scope")
            depth += 1
        return ""

    def candidates(mid: str) -> list[Loc]:
        out: list[Loc] = []
        seen = set()
        while mid in md and mid not in seen:
            seen.add(mid)
            kind, fields = md[mid]
            if kind == "DILocation":
                out.append((file_of(fields.get("scope")), int(fields.get("line", "0"))))
                mid = fields.get("inlinedAt", "")
            elif kind == "DISubprogram":
                out.append((file_of(mid), int(fields.get("line", "0"))))
                break
            else:
                break
        return out

    per_line = []
    for line in lines:
        m = _MD_DEF.match(line)
        if m:
            per_line.append(candidates(m["id"]))
            continue
        dbg = _DBG.findall(line)
        per_line.append(candidates(dbg[-1]) if dbg else [])
    func = None
    for mid, (kind, fields) in md.items():
        if kind == "DISubprogram" and fields.get("name", "").strip('"') == kernel_name:
            func = (file_of(mid), int(fields.get("line", "0")))
            break
    return per_line, func


# --- PTX ---------------------------------------------------------------------------------

_PTX_FILE = re.compile(r'^\s*\.file\s+(?P<n>\d+)\s+"(?P<path>[^"]*)"')
_PTX_LOC = re.compile(r"^\s*\.loc\s+(?P<f>\d+)\s+(?P<line>\d+)\s+\d+(?P<rest>.*)$")
_PTX_INLINED = re.compile(r"inlined_at\s+(?P<f>\d+)\s+(?P<line>\d+)\s+\d+")
_PTX_COMMENT_LOC = re.compile(r"(?P<file>[^\s@\[\]]+):(?P<line>\d+):\d+")


def _ptx(lines: list[str]) -> tuple[list[list[Loc]], Loc | None]:
    files = {}
    for line in lines:
        m = _PTX_FILE.match(line)
        if m:
            files[m["n"]] = m["path"]
    per_line: list[list[Loc]] = []
    current: list[Loc] = []
    func = None
    for line in lines:
        stripped = line.strip()
        m = _PTX_LOC.match(line)
        if m:
            current = [(files.get(m["f"], m["f"]), int(m["line"]))]
            directive, _, comment = m["rest"].partition("//")
            for inl in _PTX_INLINED.finditer(directive):
                current.append((files.get(inl["f"], inl["f"]), int(inl["line"])))
            if "@[" in comment:
                for c in _PTX_COMMENT_LOC.finditer(comment.split("@[", 1)[1]):
                    current.append((c["file"], int(c["line"])))
            if func is None:
                func = current[0]
            per_line.append(current)
            continue
        if stripped == "}" or stripped.startswith(".section"):
            current = []
        is_code = stripped and not stripped.startswith("//") and not stripped.endswith(":")
        per_line.append(current if is_code else [])
    return per_line, func

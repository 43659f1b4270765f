"""The source locations Triton's compilers record in a kernel's lowered stages: MLIR
``loc(...)`` (with ``#locN`` aliases, names, call sites and fusions) in TTIR/TTGIR,
``!dbg`` / ``!DILocation`` in LLVM IR and ``.loc`` directives in PTX, and the line of a
kernel's ``def`` in its source. ``compiler.gpu.lowered_lines`` maps them onto
``Kernel.source``.
"""

from __future__ import annotations

import os
import re

__all__ = ["Loc", "def_line_of", "stage_locations"]

Loc = tuple[str, int]  # (file path or base name, 1-based line; 0 means no line)


def def_line_of(source: str, name: str) -> int | None:
    """The 1-based line of ``def <name>(`` in ``source``.

    Example:
        >>> def_line_of("import triton\\n\\ndef k(x):\\n    pass", "k")
        3
    """
    m = re.search(rf"^def\s+{re.escape(name)}\s*\(", source, re.MULTILINE)
    return source.count("\n", 0, m.start()) + 1 if m else None


def stage_locations(stage: str, text: str, kernel_name: str) -> tuple[list[list[Loc]], Loc | None]:
    """Candidate locations per line of a lowered stage's ``text`` (innermost first), and
    the kernel function's location; no candidates for a stage that records none (SASS).

    Example:
        >>> stage_locations("ptx", '.file 1 "/t/k.py"\\n.loc 1 7 0\\nadd', "k")[0]
        [[], [('/t/k.py', 7)], [('/t/k.py', 7)]]
    """
    lines = text.split("\n")
    if stage in ("ttir", "ttgir"):
        return _mlir(lines)
    if stage == "llir":
        return _llvm(lines, kernel_name)
    if stage == "ptx":
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

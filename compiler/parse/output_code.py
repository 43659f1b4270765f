"""Split Inductor's output code into kernels, and read its fused schedule."""

from __future__ import annotations

import ast
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from compiler.model import FusedNode, Kernel, Provenance, Schedule

# `cpp_fused_add_0 = async_compile.cpp_pybinding([...], r'''` or
# `triton_poi_fused_0 = async_compile.triton('triton_poi_fused_0', '''`
_KERNEL_DEF = re.compile(r"^(?P<name>\w+) = async_compile\.(?P<method>\w+)\(")
_LANGUAGE = {
    "cpp": "cpp",
    "cpp_pybinding": "cpp",
    "triton": "triton",
    "cuda": "cuda",
    "halide": "halide",
}
_AOT_ID = re.compile(r"^# AOT ID: \['(?P<id>[^']*)'\]", re.MULTILINE)
_HANDLE = re.compile(r":\d+$")
_RAW_STREAM = re.compile(r"^stream\d+ = get_raw_stream\(\d+\)$")
_SOURCE_NODES = re.compile(r"#\s*Topologically Sorted Source Nodes: \[(?P<nodes>[^\]]*)\]")
_HEADER = re.compile(r"^(?P<name>\w+): (?P<kind>\w+)\((?P<args>.*)\)\s*$")
# a fused node's members: `<fused>.snodes[i] =` and the member's header on the next line
# (one pattern for all blocks: a pattern per fused node name compiled hundreds of them)
_SNODE = re.compile(r"^(?P<owner>\w+)\.snodes\[\d+\] =\n(?P<member>\w+):", re.MULTILINE)


def kernel_name(provenance_key: str) -> str:
    """``cpp_fused_add_0:3`` (provenance key with debug handle) -> ``cpp_fused_add_0``."""
    return _HANDLE.sub("", provenance_key)


def provenance_maps(mappings: Any) -> Provenance:
    """Inductor's provenance maps (the ``inductor_provenance_tracking_node_mappings``
    artifact, JSON-decoded): graph nodes before and after the post-grad passes, and the
    kernels made of them, each kernel key without its debug handle. Anything but a dict
    gives empty maps.

    Example:
        >>> provenance_maps({"cppCodeToPost": {"cpp_fused_relu_0:2": ["relu"]}}).kernel_to_post
        {'cpp_fused_relu_0': ('relu',)}
    """
    if not isinstance(mappings, dict):
        return Provenance()

    def table(
        key: str, strip_keys: bool = False, strip_values: bool = False
    ) -> dict[str, tuple[str, ...]]:
        raw = mappings.get(key) or {}
        out: dict[str, tuple[str, ...]] = {}
        for k, vs in raw.items():
            name = kernel_name(k) if strip_keys else str(k)
            values = [kernel_name(v) if strip_values else str(v) for v in vs or ()]
            out[name] = tuple(dict.fromkeys([*out.get(name, ()), *values]))
        return out

    return Provenance(
        pre_to_post=table("preToPost"),
        post_to_pre=table("postToPre"),
        kernel_to_post=table("cppCodeToPost", strip_keys=True),
        post_to_kernel=table("postToCppCode", strip_values=True),
    )


def aot_id(code: str) -> str:
    """The ``# AOT ID: ['0_forward']`` Inductor writes at the top, or ''."""
    m = _AOT_ID.search(code)
    return m["id"] if m else ""


def graph_kind(aot: str) -> str:
    """``forward``, ``backward`` or ``inference`` from an AOT id such as ``0_forward``."""
    for kind in ("forward", "backward", "inference"):
        if aot.endswith(kind):
            return kind
    return aot or "unknown"


def split_kernels(
    code: str, lines: list[str] | None = None, calls_of: CallIndex | None = None
) -> list[Kernel]:
    """Every kernel defined in the output code, with its exact source and lines.

    The source is the text between the triple quotes of the ``async_compile`` call,
    unchanged, so it is byte-for-byte what Inductor handed to the C++ or Triton
    compiler. ``lines`` and ``calls_of`` as for ``extern_kernel``.
    """
    lines = code.split("\n") if lines is None else lines
    calls_of = call_index(lines) if calls_of is None else calls_of
    kernels: list[Kernel] = []
    i = 0
    while i < len(lines):
        m = _KERNEL_DEF.match(lines[i])
        if not m:
            i += 1
            continue
        start = i
        opener = lines[i]
        quote_at = opener.find("'''")
        if quote_at < 0:
            i += 1
            continue
        body_start = i + 1
        j = body_start
        while j < len(lines) and not lines[j].startswith("'''"):
            j += 1
        source = "\n".join(lines[body_start:j])
        calls = tuple(n for n in calls_of.get(m["name"], ()) if not start < n <= j + 1)
        kernels.append(
            Kernel(
                name=m["name"],
                language=_LANGUAGE.get(m["method"], m["method"]),
                source=source,
                first_line=start + 1,
                last_line=min(j + 1, len(lines)),
                call_lines=calls,
                source_nodes=_source_nodes(lines, (start + 1, *calls)),
            )
        )
        i = j + 1
    return kernels


_LIBRARY_CALL = re.compile(r"(?<![\w.])(?P<name>extern_kernels\.\w+|torch\.ops\.aten\.\w+\.\w+)\(")
# Calls in the wrapper that launch no device work of their own.
_NOT_KERNELS = ("view", "reshape", "as_strided", "alias", "set_", "empty", "resize_")


# a library call's name (an extern kernel's, an FX target's) -> matmul or convolution
_LIBRARY_KIND = re.compile(
    r"\b(?:(?P<matmul>mm|addmm|bmm|baddbmm)|(?P<convolution>convolution|_convolution|conv\w*))\b"
)
_MATMUL_TARGETS = ("aten.mm", "aten.addmm", "aten.bmm", "aten.baddbmm")


def library_call_kind(name: str) -> str:
    """``matmul`` or ``convolution`` for a library call Inductor leaves to cuBLAS or cuDNN
    (an extern kernel's name), else "".

    Example:
        >>> library_call_kind("extern_kernels.addmm"), library_call_kind("aten.convolution")
        ('matmul', 'convolution')
        >>> library_call_kind("triton_poi_fused_add_0")
        ''
    """
    m = _LIBRARY_KIND.search(name)
    return "" if m is None else "matmul" if m["matmul"] else "convolution"


def is_matmul_target(target: str) -> bool:
    """Whether an FX node's target, as the graph text prints it, is an ATen matmul.

    Example:
        >>> is_matmul_target("torch.ops.aten.addmm.default"), is_matmul_target("aten.add")
        (True, False)
    """
    return any(op in target for op in _MATMUL_TARGETS)


def library_calls_in(code: str) -> list[str]:
    """Names of the library calls the wrapper makes (``extern_kernels.mm``,
    ``torch.ops.aten._scaled_dot_product_flash_attention.default``), first seen first."""
    found: dict[str, None] = {}
    for line in code.split("\n"):
        stripped = line.lstrip()
        if stripped.startswith("#") or "(" not in stripped:
            continue
        for m in _LIBRARY_CALL.finditer(stripped):
            op = m["name"].split(".")[3] if m["name"].startswith("torch.") else ""
            if not op.startswith(_NOT_KERNELS):
                found.setdefault(m["name"], None)
    return list(found)


def extern_kernel(
    code: str, name: str, lines: list[str] | None = None, calls_of: CallIndex | None = None
) -> Kernel:
    """A library call (``extern_kernels.mm``) as a kernel: its source is the call lines.

    ``lines`` and ``calls_of`` (``code`` split on newlines and its ``call_index``) save
    splitting and scanning the code again for each library call.
    """
    lines = code.split("\n") if lines is None else lines
    calls_of = call_index(lines) if calls_of is None else calls_of
    calls = tuple(calls_of.get(name, ()))
    source = "\n".join(lines[n - 1].strip() for n in calls)
    return Kernel(
        name=name,
        language="extern",
        source=source,
        call_lines=calls,
        source_nodes=_source_nodes(lines, calls),
    )


def call_source_nodes(text: str, call_lines: tuple[int, ...]) -> tuple[str, ...]:
    """Node names from the ``Topologically Sorted Source Nodes`` comments above a kernel's
    1-based ``call_lines`` in its output code ``text`` (for kernels recorded before the
    comment was read past the CUDA stream line between them).

    >>> text = "# Topologically Sorted Source Nodes: [a, b]\\nstream0 = get_raw_stream(0)"
    >>> call_source_nodes(text + "\\nk.run(x)", (3,))
    ('a', 'b')
    """
    return _source_nodes(text.split("\n"), call_lines)


def _source_nodes(lines: list[str], anchors: tuple[int, ...]) -> tuple[str, ...]:
    """Node names from the ``Topologically Sorted Source Nodes`` comments just above the
    1-based ``anchors`` (a kernel definition or a call); on CUDA the wrapper puts
    ``stream0 = get_raw_stream(0)`` between the comments and the call."""
    found: dict[str, None] = {}
    for anchor in anchors:
        for n in range(anchor - 2, max(anchor - 6, -1), -1):
            text = lines[n].strip()
            if _RAW_STREAM.match(text):
                continue
            if not text.startswith("#"):
                break
            m = _SOURCE_NODES.search(text)
            if m:
                for node in m["nodes"].split(","):
                    if node.strip():
                        found.setdefault(node.strip(), None)
                break
    return tuple(found)


CallIndex = dict[str, list[int]]
# a call: `name(`, `name.run(` or `extern_kernels.mm(`, not part of a longer name
_CALL = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(")


def call_index(lines: list[str]) -> CallIndex:
    """Callee name -> 1-based lines that call it (``k.run(`` counts as a call of ``k``),
    in one pass over the code; kernel definition lines are left out."""
    index: CallIndex = {}
    for n, line in enumerate(lines, start=1):
        if "(" not in line or _KERNEL_DEF.match(line):
            continue
        names = {m[:-4] if m.endswith(".run") else m for m in _CALL.findall(line)}
        for name in names:
            index.setdefault(name, []).append(n)
    return index


def parse_schedule(pre_fusion: str | None, post_fusion: str | None) -> Schedule:
    """Read the scheduler nodes after fusion from the ``ir_post_fusion`` log text."""
    fused: list[FusedNode] = []
    if post_fusion:
        for block in _strip_banner(post_fusion).split("\n\n\n"):
            block = block.strip("\n")
            if not block:
                continue
            head = _HEADER.match(block.split("\n", 1)[0])
            if not head:
                continue
            name = head["name"]
            members = tuple(
                m["member"] for m in _SNODE.finditer(block) if m["owner"] == name
            ) or (name,)
            buffers = tuple(
                dict.fromkeys(re.findall(r"^\s*(buf\d+)\.layout = ", block, re.MULTILINE))
            )
            extern = re.search(r"\.node\.kernel = (\S+)", block)
            fused.append(
                FusedNode(
                    name=name,
                    kind=head["kind"],
                    members=members,
                    buffers=buffers,
                    extern_kernel=extern.group(1) if extern else "",
                    text=block,
                )
            )
    return Schedule(pre_fusion=pre_fusion, post_fusion=post_fusion, fused=tuple(fused))


def _strip_banner(text: str) -> str:
    first, _, rest = text.partition("\n")
    return rest if first.strip() in ("BEFORE FUSION", "AFTER FUSION") else text


# What the wrapper and a Triton kernel's decorator say about buffers and launches: the
# kernel's parameters and grid from Inductor's ``triton_meta``/``inductor_meta``, buffer
# shapes from ``empty_strided_*``/``assert_size_stride`` lines and reuses.
_SIGNATURE = re.compile(r"'signature': \{(?P<body>[^}]*)\}")
_PARAM = re.compile(r"'(?P<name>\w+)': '(?P<type>[^']+)'")
_GRID_TYPE = re.compile(r"'grid_type': '(?P<kind>\w+)'")
_EMPTY = re.compile(r"(?P<name>\w+) = empty_strided_\w+\(\((?P<shape>[^)]*)\)")
_ASSERT = re.compile(r"assert_size_stride\((?P<name>\w+), \((?P<shape>[^)]*)\)")
# "buf3 = buf0; del buf0  # reuse": Inductor hands a dead buffer to a new name
_REUSE = re.compile(r"(?P<name>\w+) = (?P<source>\w+); del (?P=source)\s+# reuse")
_REINTERPRET = re.compile(r"reinterpret_tensor\(\w+, \((?P<shape>[^)]*)\)")


def kernel_params(source: str) -> list[tuple[str, str]] | None:
    """(name, type) of a Triton kernel's parameters, from the ``signature`` Inductor
    writes in its decorator; None without one.

    Example:
        >>> kernel_params("triton_meta={'signature': {'in_ptr0': '*fp32', 'XBLOCK': 'constexpr'}}")
        [('in_ptr0', '*fp32'), ('XBLOCK', 'constexpr')]
    """
    sig = _SIGNATURE.search(source)
    if sig is None:
        return None
    return [(m["name"], m["type"]) for m in _PARAM.finditer(sig["body"])]


def grid_type(source: str) -> str | None:
    """The grid kind Inductor's decorator names (``Grid1D``), else None.

    Example:
        >>> grid_type("inductor_meta={'grid_type': 'Grid1D', 'kernel_name': 'k'}")
        'Grid1D'
    """
    m = _GRID_TYPE.search(source)
    return m["kind"] if m else None


def buffer_shapes(code: str) -> dict[str, str]:
    """Buffer name -> its sizes as printed, from the wrapper's allocations, size
    asserts and reuses.

    Example:
        >>> buffer_shapes("buf0 = empty_strided_cuda((4, 8), (8, 1), torch.float32)")
        {'buf0': '4, 8'}
    """
    shapes = {m["name"]: m["shape"] for m in _EMPTY.finditer(code)}
    shapes.update({m["name"]: m["shape"] for m in _ASSERT.finditer(code)})
    for reuse in _REUSE.finditer(code):
        if reuse["source"] in shapes:
            shapes.setdefault(reuse["name"], shapes[reuse["source"]])
    return shapes


def view_shape(arg: str) -> str | None:
    """The sizes of a ``reinterpret_tensor`` argument as printed, else None.

    Example:
        >>> view_shape("reinterpret_tensor(buf0, (2, 3), (3, 1), 0)")
        '2, 3'
    """
    m = _REINTERPRET.match(arg)
    return m["shape"] if m else None


def call_args(line: str, name: str) -> list[str]:
    """The positional arguments of the wrapper's call of kernel ``name`` on ``line``.

    Example:
        >>> call_args("triton_poi_0.run(buf0, (2, 3), 16, stream=s0)", "triton_poi_0")
        ['buf0', '(2, 3)', '16']
    """
    start = line.find(f"{name}.run(")
    if start < 0:
        start = line.find(f"{name}(")
        if start < 0:
            return []
    text = line[line.index("(", start) + 1 :]
    args, depth, current = [], 0, ""
    for ch in text:
        if ch in "([":
            depth += 1
        elif ch in ")]":
            if depth == 0:
                break
            depth -= 1
        if ch == "," and depth == 0:
            args.append(current.strip())
            current = ""
        else:
            current += ch
    if current.strip():
        args.append(current.strip())
    return [a for a in args if "=" not in a.split("(")[0]]


# --- Which line of an output code's ``call`` writes which buffer (``compiler.numerics``) ---
#
# Inductor's wrapper names each buffer once (``buf3``) and gives an in-place result a new
# name (``buf1 = buf0; del buf0  # reuse``), so a buffer's value is final right after the
# first kernel line that names it: a kernel's argument (``cpp_fused_relu_0(buf1)``,
# ``triton_poi_fused_0.run(buf1, ...)``; not one the kernel only reads, as its definition in
# the same code says), an extern kernel's ``out=`` (not its inputs) or the name a
# fallback's result is bound to (``buf5 = torch.ops.aten.max.dim(...)``). A view passed
# where the kernel writes (``k.run(reinterpret_tensor(buf3, ...), ...)``, or as ``out=``)
# writes its buffer's storage, so it counts as a write of buf3. Allocations, aliases and
# views bound to a name write nothing. Read with Python's ``ast`` from the code torch
# wrote, not from its printed comments. A buffer a later kernel writes into
# again (a mutation, ``index_put_``) is named again on that line: the caller keeps its
# value after the last line that writes it (a later kernel that only reads it is no write).

# calls that bind a name to memory (or a view of it) without computing a value
_NO_VALUE = ("empty_strided", "reinterpret_tensor", "alloc_from_pool", "as_strided", "empty")


def _callee(call: ast.Call) -> str:
    return ast.unparse(call.func)


def _allocates(call: ast.Call) -> bool:
    name = _callee(call).rsplit(".", 1)[-1]
    return any(name == n or name.startswith(n + "_") for n in _NO_VALUE)


def _written_name(arg: ast.expr) -> str | None:
    """The buffer an argument lets the callee write: a name (``buf3``) or the buffer a
    ``reinterpret_tensor`` view of it passes (``reinterpret_tensor(buf3, (16,), (1,), 0)``:
    the kernel writes buf3's storage)."""
    if isinstance(arg, ast.Name):
        return arg.id
    if (isinstance(arg, ast.Call) and _callee(arg) == "reinterpret_tensor" and arg.args
            and isinstance(arg.args[0], ast.Name)):  # fmt: skip
        return arg.args[0].id
    return None


def _call_writes(call: ast.Call, read_only: dict[str, frozenset[int]]) -> list[str]:
    callee = _callee(call)
    if callee.startswith("extern_kernels."):  # a library call writes its ``out=`` only
        skip: Collection[int] = range(len(call.args))
    else:
        skip = read_only.get(callee.removesuffix(".run"), frozenset())
    found = [_written_name(a) for i, a in enumerate(call.args) if i not in skip]
    found += [_written_name(k.value) for k in call.keywords]
    return [name for name in found if name is not None]


# a Triton kernel's parameters, from its ``def`` in the source Inductor hands to Triton
_TRITON_DEF = re.compile(r"^def \w+\((?P<params>[^)]*)\):", re.MULTILINE)


def _read_only_args(tree: ast.Module) -> dict[str, frozenset[int]]:
    """Kernel name -> positions of the arguments it only reads, from the kernels the output
    code defines: a Triton kernel's ``in_ptr`` parameters (``out_ptr`` and ``in_out_ptr``
    ones are written; Inductor names them so), a C++ kernel's ``const`` pointer types
    (``async_compile.cpp_pybinding(['const float*', 'float*'], ...)``). A buffer a later
    kernel only reads is then not taken again as written there."""
    found: dict[str, frozenset[int]] = {}
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call)
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):  # fmt: skip
            continue
        name, callee, args = stmt.targets[0].id, _callee(stmt.value), stmt.value.args
        if callee == "async_compile.triton" and len(args) > 1 and isinstance(args[1], ast.Constant):
            m = _TRITON_DEF.search(str(args[1].value))
            if m is not None:
                params = [p.split(":")[0].strip() for p in m["params"].split(",")]
                found[name] = frozenset(i for i, p in enumerate(params) if p.startswith("in_ptr"))
        elif callee == "async_compile.cpp_pybinding" and args and isinstance(args[0], ast.List):
            types = [e.value for e in args[0].elts if isinstance(e, ast.Constant)]
            found[name] = frozenset(i for i, t in enumerate(types) if str(t).startswith("const "))
    return found


def line_writes(source: str, first_line: int) -> dict[int, tuple[str, ...]]:
    """Line -> names the statement on it may write, for the function that starts at
    ``first_line`` of ``source`` (the output code's ``call``); {} if none starts there.

    Example:
        >>> code = '''def call(args):
        ...     buf0 = empty_strided_cpu((4,), (1,), torch.float32)
        ...     extern_kernels.mm(a, b, out=buf0)
        ...     buf1 = buf0; del buf0  # reuse
        ...     cpp_fused_relu_0(buf1)
        ...     return (buf1, )
        ... '''
        >>> line_writes(code, 1)
        {3: ('buf0',), 5: ('buf1',)}
    """
    tree = ast.parse(source)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "call" and node.lineno == first_line:
            return _writes(node.body, _read_only_args(tree))
    return {}


def _writes(
    body: list[ast.stmt], read_only: dict[str, frozenset[int]]
) -> dict[int, tuple[str, ...]]:
    found: dict[int, list[str]] = {}
    for stmt in body:
        names: list[str] = []
        if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
            names = _call_writes(stmt.value, read_only)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Call):
            if not _allocates(stmt.value):
                names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
                names += _call_writes(stmt.value, read_only)
        elif isinstance(stmt, ast.Assign) and isinstance(stmt.value, ast.Subscript):
            names = [t.id for t in stmt.targets if isinstance(t, ast.Name)]
        elif isinstance(stmt, (ast.With, ast.If, ast.For)):
            for line, inner in _writes(stmt.body, read_only).items():
                found.setdefault(line, []).extend(inner)
        if names:
            found.setdefault(stmt.lineno, []).extend(names)
    return {line: tuple(names) for line, names in sorted(found.items())}


def line_callees(source: str, first_line: int) -> dict[int, str]:
    """Line -> the function each statement of ``call`` calls (``cpp_fused_relu_0``,
    ``extern_kernels.addmm``, ``triton_poi_fused_0.run``), for naming a buffer's kernel
    where the Exploration has no kernel on that line.

    Example:
        >>> line_callees("def call(args):\\n    k(buf0)\\n", 1)
        {2: 'k'}
    """
    found: dict[int, str] = {}
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.FunctionDef) and node.name == "call" and node.lineno == first_line:
            for stmt in ast.walk(node):
                value = getattr(stmt, "value", None)
                if isinstance(stmt, (ast.Expr, ast.Assign)) and isinstance(value, ast.Call):
                    found[stmt.lineno] = _callee(value)
    return found


def file_line_writes(path: str, first_line: int) -> dict[int, tuple[str, ...]]:
    """``line_writes`` for the output code file at ``path``.

    Example:
        >>> file_line_writes("/nonexistent.py", 1)
        {}
    """
    try:
        return line_writes(Path(path).read_text(encoding="utf-8"), first_line)
    except (OSError, SyntaxError):
        return {}

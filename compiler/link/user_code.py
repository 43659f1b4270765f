"""Where in the user's code things came from: ``Kernel.user_lines`` and
``GraphBreak.user_frames``, derived once by ``link.derive``.

A kernel's user lines are what Inductor's provenance recorded for it (``user_stack``)
and, for each post-grad node it ran, the ``# File: path:line`` line torch printed above
that node in the post-grad graph. Reading those means parsing the post-grad graph, so
the lines are computed when first read: loading a trace stays free of graph parsing.

Whether a frame is user code has one rule, ``is_user_file``: code outside torch, this
project (``compiler/``, ``explorer/``) and Python's own generated or frozen modules, and
outside installed packages unless torch.compile compiled code of that file (a
transformers model is the user's; IPython, ipykernel and pytest are not). A graph
break's user stack runs from the program's entry (pytest, runpy, the explorer's own
wrapper) down to the line that broke; its frames link to the source view when they are
user code in the file of one of the exploration's compiled frames (the files the source
view shows).
"""

from __future__ import annotations

import functools
import os
import re
import traceback
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import replace
from types import TracebackType

from compiler._torch_files import torch_dir
from compiler.model import Compile, Derived, GraphBreak, Kernel, OutputCode, SourceLoc
from compiler.model.stages import POST_GRAD_GRAPHS
from compiler.parse.dynamo_text import user_code_location
from compiler.parse.graph_text import comment_sources
from compiler.parse.resume_names import resume_name

# an output code's post-grad graphs, the one after the passes first
_POST_GRAD = POST_GRAD_GRAPHS[::-1]
# torch and this project (compiler/ and explorer/ side by side): never the user's code,
# even where Dynamo compiled one of their frames
_PROJECT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_NOT_USER = (
    # found without importing torch: a trace is read where torch may be absent
    os.path.abspath(torch_dir() or os.path.join(os.sep, "torch-not-installed")) + os.sep,
    os.path.join(_PROJECT, "compiler") + os.sep,
    os.path.join(_PROJECT, "explorer") + os.sep,
)
# code Python made itself: frozen modules (runpy, importlib) and exec'd strings
_GENERATED = ("<frozen ", "<string>")
_INSTALLED = re.compile(r"[/\\](?:site-packages|dist-packages)[/\\]")
# Python's standard library (``copy.deepcopy``, ``contextlib``): where Dynamo reports a
# break inside it, the user's line that called it is the place to show. By path shape
# too, so a recording made with another Python matches.
_STDLIB = re.compile(r"[/\\]lib[/\\]python3\.\d+[/\\](?!(?:site|dist)-packages[/\\])")


def node_sources(oc: OutputCode) -> dict[str, SourceLoc]:
    """Post-grad node name -> the user line torch printed for it (top-level nodes)."""
    graph = next((oc.graphs[s] for s in _POST_GRAD if s in oc.graphs), None)
    if graph is None:
        return {}
    return {n.name: n.source for n in graph.nodes if not n.module and n.source is not None}


def user_lines(k: Kernel, sources: Mapping[str, SourceLoc]) -> tuple[SourceLoc, ...]:
    """``k``'s user lines (see ``Kernel.user_lines``), each ``file:line`` once.

    Example:
        >>> loc = SourceLoc(filename="m.py", line=3)
        >>> user_lines(Kernel(name="k", language="cpp", source="", post_grad_nodes=("add",)),
        ...            {"add": loc})
        (SourceLoc(filename='m.py', line=3, function='', code=''),)
    """
    found = [*k.user_stack]
    found += [sources[n] for n in (*k.post_grad_nodes, *k.source_nodes) if n in sources]
    seen: dict[tuple[str, int], SourceLoc] = {}
    for loc in found:
        if loc.filename and loc.line:
            seen.setdefault((loc.filename, loc.line), loc)
    return tuple(seen.values())


def with_user_lines(oc: OutputCode, cache: Derived) -> tuple[Kernel, ...]:
    """``oc``'s kernels, each with ``user_lines`` computed by ``cache`` on first read;
    ``oc``'s post-grad graph (linked, as a view shows it) is parsed once for all of
    them, and only when one of them needs it."""
    sources = functools.cache(lambda: node_sources(oc))

    def lines_of(k: Kernel) -> Callable[[], tuple[SourceLoc, ...]]:
        if not (k.post_grad_nodes or k.source_nodes):
            return lambda: user_lines(k, {})
        return lambda: user_lines(k, sources())

    return tuple(replace(k, derived=cache.later("user_lines", lines_of(k))) for k in oc.kernels)


def callers(c: Compile) -> tuple[SourceLoc, ...]:
    """The frames that called into compile ``c``'s frame, outermost first: its recorded
    stack without the compiled frame itself, which torch's record ends with (a stack
    without it is taken whole).

    Example:
        >>> from compiler.model import CompileId
        >>> run = SourceLoc(filename="/w/train.py", line=9, function="run")
        >>> step = SourceLoc(filename="/w/train.py", line=3, function="step")
        >>> c = Compile(compile_id=CompileId.from_string("0/0"), code_name="step",
        ...             filename="/w/train.py", first_line=2, stack=(run, step))
        >>> callers(c) == (run,) == callers(replace(c, stack=(run,)))
        True
    """
    stack = c.stack
    if stack and stack[-1].function == c.code_name and stack[-1].filename == c.filename:
        return stack[:-1]
    return stack


def resume_point(c: Compile) -> SourceLoc | None:
    """Where a resume function resumes (see ``Compile.resumes``), from the name Dynamo
    gave it; None for other compiles.

    Example:
        >>> from compiler.model import CompileId
        >>> resume_point(Compile(compile_id=CompileId(frame_id=1, frame_compile_id=0),
        ...     code_name="torch_dynamo_resume_in_f_at_12", filename="m.py"))
        SourceLoc(filename='m.py', line=12, function='f', code='')
    """
    r = resume_name(c.code_name)
    if r is None or r.line is None:
        return None
    return SourceLoc(filename=c.filename, line=r.line, function=r.function)


def graph_source_lines(text: str) -> Iterator[tuple[str, int]]:
    """Every ``(file, line)`` a graph's text names in its ``# File: path:line in fn``
    comments, in order: the user lines its nodes came from, read without parsing it.

    Example:
        >>> list(graph_source_lines("    # File: /m.py:3 in f, code: y = x + 1"))
        [('/m.py', 3)]
    """
    for loc in comment_sources(text).values():
        yield loc.filename, loc.line


def error_location(exc: BaseException) -> SourceLoc | None:
    """The user line a Dynamo error names last in its ``from user code:`` stack, or None.

    Example:
        >>> error_location(RuntimeError('boom\\nfrom user code:\\n  File "/m.py", line 4, in f'))
        SourceLoc(filename='/m.py', line=4, function='f', code='')
    """
    return user_code_location(str(exc))


def compiled_files(compiles: Iterable[Compile]) -> frozenset[str]:
    """The files of the compiled frames: where the user's code is."""
    return frozenset(c.filename for c in compiles if c.filename)


def is_user_file(filename: str, compiled: frozenset[str] = frozenset()) -> bool:
    """Whether code in ``filename`` is the user's: the one rule for "user frame".

    Not torch, not this project (``compiler/``, ``explorer/``), not Python's standard
    library, not a frozen module or an exec'd string, and not an installed package
    unless it is one of ``compiled``, the files torch.compile compiled code of
    (``compiled_files``). Notebook cells are.

    Example:
        >>> torch_init = str(torch_dir() / "__init__.py")
        >>> files = ("/x/model.py", torch_init, "<frozen runpy>", "/usr/lib/python3.11/copy.py")
        >>> [is_user_file(f) for f in files]
        [True, False, False, False]
        >>> m = "/venv/site-packages/transformers/m.py"
        >>> is_user_file(m), is_user_file(m, frozenset({m}))
        (False, True)
    """
    if not filename or filename.startswith(_GENERATED):
        return False
    if filename.startswith("<"):  # a notebook cell, ``<ipython-input-3-...>``
        return True
    if os.path.abspath(filename).startswith(_NOT_USER) or _STDLIB.search(filename):
        return False
    return filename in compiled or not _INSTALLED.search(filename)


_LIBRARY = re.compile(
    r"[/\\](?:site-packages|dist-packages)[/\\](?P<lib>[A-Za-z_]\w*)(?P<rest>[/\\].*)?$"
)


def library_of(filename: str) -> tuple[str, str] | None:
    """``(library, path inside it)`` for a file of an installed package, else None.

    Example:
        >>> library_of("/venv/lib/site-packages/transformers/modeling_utils.py")
        ('transformers', 'transformers/modeling_utils.py')
        >>> library_of("/home/me/train.py") is None
        True
    """
    m = _LIBRARY.search(filename)
    if m is None:
        return None
    rest = (m["rest"] or "").replace("\\", "/")
    return m["lib"], f"{m['lib']}{rest}"


def is_torch_or_ours(filename: str) -> bool:
    """Whether code in ``filename`` is torch's or this project's (``compiler/``,
    ``explorer/``): what their functions hold is library state, never the user's.

    Example:
        >>> is_torch_or_ours(str(torch_dir() / "_dynamo" / "eval_frame.py"))
        True
        >>> is_torch_or_ours("/x/model.py"), is_torch_or_ours("")
        (False, False)
    """
    return bool(filename) and os.path.abspath(filename).startswith(_NOT_USER)


def is_own_code(filename: str) -> bool:
    """The user's own code: ``is_user_file`` without counting compiled library files.

    Example:
        >>> is_own_code("/x/model.py"), is_own_code("/venv/site-packages/timm/m.py")
        (True, False)
    """
    return is_user_file(filename)


def is_user_frame(loc: SourceLoc, files: frozenset[str]) -> bool:
    """A user-code frame (``is_user_file``) in one of ``files``, the compiled frames'
    files that the source view shows.

    Example:
        >>> is_user_frame(SourceLoc(filename="/x/model.py", line=3), frozenset({"/x/model.py"}))
        True
    """
    return loc.filename in files and is_user_file(loc.filename, files)


def is_model_frame(loc: SourceLoc, files: frozenset[str]) -> bool:
    """A frame of the model's code: the user's (``is_user_frame``), or a file of a library
    whose code torch.compile compiled (one of ``files`` belongs to it). A library model's
    compiled frame is often a decorator's wrapper (transformers' ``generic.py`` calling
    the model's ``forward``); the lines inside the model are its own, so the innermost
    model frame is the model's line, never the wrapper's.

    Example:
        >>> wrapper = "/v/site-packages/transformers/utils/generic.py"
        >>> bert = SourceLoc(filename="/v/site-packages/transformers/models/bert/m.py", line=3)
        >>> is_model_frame(bert, frozenset({wrapper})), is_model_frame(bert, frozenset())
        (True, False)
    """
    if is_user_frame(loc, files):
        return True
    lib = library_of(loc.filename)
    if lib is None or lib[0] == "torch":
        return False
    return any((library_of(f) or ("", ""))[0] == lib[0] for f in files)


def innermost_user_frame(
    tb: TracebackType | None, compiled: frozenset[str] = frozenset()
) -> SourceLoc | None:
    """The innermost user-code frame (``is_user_file``) of a traceback, or None.

    Example:
        >>> try:
        ...     exec(compile("1/0", "/x/m.py", "exec"))
        ... except ZeroDivisionError as e:
        ...     innermost_user_frame(e.__traceback__).filename
        '/x/m.py'
    """
    found = None
    for frame in traceback.extract_tb(tb):
        if is_user_file(frame.filename, compiled):
            found = SourceLoc(filename=frame.filename, line=frame.lineno or 0,
                              function=frame.name)  # fmt: skip
    return found


def with_user_frames(gb: GraphBreak, files: frozenset[str]) -> GraphBreak:
    """``gb`` with ``user_frames`` filled in for its ``user_stack``."""
    flags = tuple(is_user_frame(loc, files) for loc in gb.user_stack)
    return gb if flags == gb.user_frames else replace(gb, user_frames=flags)


_TORCH_DIR = _NOT_USER[0]


def owner_of(filename: str) -> tuple[str, str]:
    """Whose code ``filename`` is: ``("torch", "torch.optim")`` for torch's own files
    (the area: torch's subpackage), ``(library, library)`` for an installed package
    (``library_of``), ``("python", "python")`` for the standard library, ``("user", "")``
    otherwise. The advisor never asks for an edit to
    torch's or a library's code: it gives the change on the user's side.

    Example:
        >>> import os
        >>> owner_of(os.path.join(torch_dir(), "optim", "adam.py"))
        ('torch', 'torch.optim')
        >>> owner_of("/venv/site-packages/transformers/models/gpt2/modeling_gpt2.py")
        ('transformers', 'transformers')
        >>> owner_of("/other/site-packages/torch/nn/parallel/distributed.py")
        ('torch', 'torch.nn')
        >>> owner_of("/usr/lib/python3.11/copy.py"), owner_of("/home/me/train.py")
        (('python', 'python'), ('user', ''))
    """
    path = os.path.abspath(filename) if filename and not filename.startswith("<") else ""
    lib = library_of(filename)
    if _STDLIB.search(filename) and lib is None:
        return "python", "python"
    inside = ""
    if path.startswith(_TORCH_DIR):
        inside = path[len(_TORCH_DIR) :]
    elif lib is not None and lib[0] == "torch":  # torch installed elsewhere (a recording)
        inside = lib[1][len("torch/") :]
    else:
        return (lib[0], lib[0]) if lib is not None else ("user", "")
    parts = inside.replace("\\", "/").split("/")
    sub = parts[0] if len(parts) > 1 and not parts[0].startswith("_") else ""
    return "torch", f"torch.{sub}" if sub else "torch"

"""The ``%%compile`` cell magic: run a cell under torch.compile and show the explorer.

Two cell shapes:

- a snippet of tensor code (no top-level ``def``/``class``) is compiled as a function
  of the notebook variables it reads, godbolt-style: tensors, modules and numbers it
  reads become the function's parameters, its assignments go back to the notebook and
  its last expression is the cell's result;
- a cell that defines functions or ``nn.Module`` classes and calls them runs as it is,
  with one of them (``--target NAME``, or the only one) compiled while the cell runs.

Either way the cell's source is registered with ``linecache`` under ``<compile-cell-N>``,
so tracebacks, graph nodes and graph breaks point at the cell's own lines.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import dataclasses
import io
import linecache
import os
import sys
import tokenize
import types
from collections.abc import Iterator
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from ._progress import showing_progress
from ._snippet import OUT_SLOT, UNBOUND, snippet_function


@magics_class
class CompileMagics(Magics):
    """``%%compile``: torch.compile a cell and explore every stage it went through."""

    @no_var_expand
    @magic_arguments("%compile")
    @argument(
        "name", nargs="?", default=None,
        help="store the Exploration in this notebook variable (as %%%%capture NAME does)",
    )  # fmt: skip
    @argument(
        "--target", metavar="NAME", default=None,
        help="the function, nn.Module (instance or class) to compile while the cell runs; it "
        "may be defined in the cell or earlier. Default: the cell's only def/class; a cell "
        "with none is compiled as a function of the variables it reads",
    )  # fmt: skip
    @argument("--backend", default=None, help="torch.compile backend (default: inductor)")
    @argument(
        "--mode", default=None,
        help="torch.compile mode: default, reduce-overhead, max-autotune, ...",
    )  # fmt: skip
    @argument(
        "--dynamic", action=argparse.BooleanOptionalAction, default=None,
        help="--dynamic: symbolic shapes from the start; --no-dynamic: never; "
        "neither: torch's default (dynamic after a shape change)",
    )  # fmt: skip
    @argument(
        "--fullgraph", action="store_true",
        help="fail on the first graph break instead of splitting the graph",
    )  # fmt: skip
    @argument(
        "--options", metavar="EXPR", default=None,
        help="Inductor options: a dict expression evaluated in the notebook, quoted if it has "
        "spaces, e.g. --options \"{'trace.enabled': True}\" or --options my_opts",
    )  # fmt: skip
    @argument(
        "--keep-caches", action="store_true",
        help="keep the FX graph and AOTAutograd caches on (a cache hit then skips the "
        "pre-grad and joint graphs)",
    )  # fmt: skip
    @argument(
        "--no-decompile", action="store_true",
        help="skip decompiling Dynamo's transformed bytecode (faster on big functions)",
    )  # fmt: skip
    @argument(
        "--no-reset", action="store_true",
        help="do not reset Dynamo first: code compiled earlier keeps its cache, and "
        "compile ids continue from there instead of starting at 0/0",
    )  # fmt: skip
    @argument(
        "--live", action="store_true",
        help="make the cell's source an editor whose edits recompile (in a worker process); "
        "the cell must define the function or nn.Module class to compile, called on inputs "
        "given as --inputs EXPR",
    )  # fmt: skip
    @argument(
        "--inputs", metavar="EXPR", default=None,
        help="with --live: the example inputs, a notebook expression (a tensor or a tuple)",
    )  # fmt: skip
    @argument(
        "--no-view", action="store_true",
        help="do not display the explorer; only store the Exploration (needs NAME)",
    )  # fmt: skip
    @cell_magic("compile")
    def compile_cell(self, line: str, cell: str) -> None:
        """Compile the cell with torch.compile and show every stage in the explorer.

        A cell without top-level def/class statements is compiled as a function of
        the tensors, modules and numbers it reads; otherwise the cell runs as it is with
        --target NAME (or its only def/class) compiled. The cell's output, its last
        value and its assignments stay as in a normal cell.
        """
        args = parse_argstring(self.compile_cell, line)
        _check_name("NAME", args.name)
        _check_name("--target", args.target)
        if args.no_view and not args.name:
            raise UsageError(
                "--no-view keeps only the stored Exploration: give a NAME to store it."
            )
        options = self._options(args.options)
        if args.live:
            self._run_live(args, line, cell, options)
            return
        tree, filename = self._parse(cell)
        if tree is None:
            return
        defs = _definitions(tree)
        if args.target is None and defs:
            if len(defs) > 1:
                names = ", ".join(defs)
                msg = f"the cell defines {names}: pick the one to compile with --target NAME."
                raise UsageError(msg)
            args.target = next(iter(defs))
        quiet = _ends_with_semicolon(cell)
        with showing_progress():
            if args.target is None:
                self._run_snippet(args, options, tree, filename, quiet)
            else:
                self._run_program(args, options, tree, filename, defs, quiet)

    # -- the two shapes ---------------------------------------------------------------

    def _run_snippet(
        self,
        args: argparse.Namespace,
        options: dict[str, Any] | None,
        tree: ast.Module,
        filename: str,
        quiet: bool,
    ) -> None:
        import compiler

        ns = self.shell.user_ns
        fn, params, bound, has_value = snippet_function(
            tree, filename, f"cell_{self._cell_number()}", ns
        )
        ns.pop(OUT_SLOT, None)
        try:
            exploration = compiler.explore(
                fn,
                *(ns[p] for p in params),
                wrap=True,
                reset=not args.no_reset,
                keep_caches=args.keep_caches,
                decompile=not args.no_decompile,
                **_compile_kwargs(args, options, default_backend=True),
            )
        except compiler.OptionError as exc:
            raise UsageError(str(exc)) from None
        except compiler.ExploreError as exc:
            cause = exc.__cause__ or exc
            where = "" if " at " in str(exc) else _user_code_location(cause, filename)
            message = f"{type(exc).__name__}{where}: {exc}"
            user_error = isinstance(exc, compiler.InputError)
            self._report(cause, exc.exploration, args, message, traceback=user_error)
            return
        finally:
            out = ns.pop(OUT_SLOT, None)
        if out is not None:
            value, values = out
            ns.update((k, v) for k, v in zip(bound, values, strict=True) if v is not UNBOUND)
            if has_value and not quiet:
                self.shell.displayhook(value)
        self._finish(
            args,
            exploration,
            "torch.compile found nothing to compile in the cell: it runs no tensor operations "
            "on the variables it reads.",
        )

    def _run_program(
        self,
        args: argparse.Namespace,
        options: dict[str, Any] | None,
        tree: ast.Module,
        filename: str,
        defs: dict[str, int],
        quiet: bool,
    ) -> None:
        import torch

        import compiler

        target = args.target
        ns = self.shell.user_ns
        if target not in defs and target not in ns:
            known = ", ".join(defs) or "none"
            msg = (
                f"--target {target}: no such name in the cell (its defs and classes: {known}) "
                "or in the notebook. Define it first, or check the spelling."
            )
            raise UsageError(msg)
        kwargs = _compile_kwargs(args, options, default_backend=False)
        _check_compile_options(kwargs)
        split = defs[target] + 1 if target in defs else 0
        head, tail = tree.body[:split], tree.body[split:]
        last = tail.pop() if tail and isinstance(tail[-1], ast.Expr) else None
        if not args.no_reset:
            torch.compiler.reset()
        failure: Exception | None = None
        value: Any = None
        with compiler.recording(
            keep_caches=args.keep_caches, decompile=not args.no_decompile
        ) as rec:
            rec.target = target
            rec.options = compiler.Options(
                backend=kwargs.get("backend", "inductor"),
                mode=args.mode,
                dynamic=args.dynamic,
                fullgraph=args.fullgraph,
                options={k: _option_text(v) for k, v in (options or {}).items()},
                keep_caches=args.keep_caches,
            )  # fmt: skip
            try:
                _exec(head, filename, ns)
                with _compiled(target, ns, kwargs):
                    _exec(tail, filename, ns)
                    if last is not None:
                        value = eval(compile(ast.Expression(last.value), filename, "eval"), ns)
            except (UsageError, KeyboardInterrupt):
                raise
            except Exception as exc:
                failure = exc
        exploration = rec.exploration()
        if failure is not None:
            # compiler classifies the failure; the cell only words it in its own terms.
            # The cell is not run again to check it eagerly: that would repeat its effects.
            error = compiler.classify_failure(
                failure, target=target, options=rec.options, exploration=exploration
            )
            message = _program_failure(failure, error, target, args, filename)
            exploration = dataclasses.replace(
                exploration,
                errors=(*exploration.errors, compiler.StageError(stage="run", message=message)),
            )
            user_error = isinstance(error, compiler.InputError)
            self._report(failure, exploration, args, message, traceback=user_error)
            return
        if last is not None and not quiet:
            self.shell.displayhook(value)
        self._finish(
            args,
            exploration,
            f"nothing was compiled: {target} was not called while the cell ran (or ran no "
            "tensor operations). Call it in the cell, after its definition.",
        )

    def _run_live(
        self, args: argparse.Namespace, line: str, cell: str, options: dict[str, Any] | None
    ) -> None:
        from ._live import live

        if args.inputs is None:
            raise UsageError("--live needs the example inputs: --inputs EXPR (e.g. --inputs x).")
        try:
            inputs = eval(args.inputs, self.shell.user_ns)
        except Exception as exc:
            msg = f"--inputs {args.inputs}: evaluating it failed with {type(exc).__name__}: {exc}."
            raise UsageError(msg) from None
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        kwargs = _compile_kwargs(args, options, default_backend=True)
        widget = live(cell, *inputs, target=args.target, magic_line=f"%%compile {line}".strip(),
                      **kwargs)  # fmt: skip
        if args.name:
            self.shell.user_ns[args.name] = widget
        display(widget)

    # -- helpers ------------------------------------------------------------------------

    def _options(self, expr: str | None) -> dict[str, Any] | None:
        if expr is None:
            return None
        if len(expr) > 1 and expr[0] == expr[-1] and expr[0] in "'\"":
            expr = expr[1:-1]  # IPython's argument splitting keeps the quotes
        try:
            value = eval(expr, self.shell.user_ns)
        except Exception as exc:
            msg = f"--options {expr}: evaluating it failed with {type(exc).__name__}: {exc}."
            raise UsageError(msg) from None
        if not isinstance(value, dict) or not all(isinstance(k, str) for k in value):
            msg = (
                f"--options {expr}: expected a dict of Inductor option names to values, got a "
                f"{type(value).__name__}, e.g. --options \"{{'trace.enabled': True}}\"."
            )
            raise UsageError(msg)
        return value

    def _cell_number(self) -> int:
        """The number the front-end shows for the running cell (``In [3]``): IPython has
        already advanced ``execution_count`` to the next cell while this one runs."""
        count = int(self.shell.execution_count or 1)
        return count - 1 if count > 1 else count

    def _parse(self, cell: str) -> tuple[ast.Module | None, str]:
        """The cell's AST (IPython syntax such as ``%time`` translated) and its file name."""
        filename = _register_source(cell, self._cell_number())
        try:
            return ast.parse(cell, filename), filename
        except SyntaxError:
            pass
        try:
            # Only when needed: the translation drops leading blank lines (shifting lines).
            return ast.parse(self.shell.transform_cell(cell), filename), filename
        except SyntaxError:
            self.shell.showsyntaxerror(filename)
            return None, filename

    def _finish(self, args: argparse.Namespace, exploration: Any, if_empty: str) -> None:
        if not exploration.compiles:
            print(f"%%compile: {if_empty}", file=sys.stderr, flush=True)
        if args.name:
            self.shell.user_ns[args.name] = exploration
        if not args.no_view:
            from .widget import ExplorationWidget

            display(ExplorationWidget(exploration))

    def _report(
        self,
        exc: BaseException,
        exploration: Any,
        args: argparse.Namespace,
        message: str,
        *,
        traceback: bool,
    ) -> None:
        """One paragraph on stderr, the user's frames of the traceback, what was captured.

        ``exc`` becomes ``sys.last_value`` (as IPython does for any error), so ``%tb``
        prints torch's full message and ``%debug`` opens where it was raised.
        """
        captured = exploration is not None and bool(exploration.compiles)
        text = message
        if captured and not args.no_view:
            text += " The compiles recorded before the failure are shown below."
        if args.name:
            text += f" {args.name} was left as it was."
        if not traceback:
            text += " %tb prints the full error."
        print(text, file=sys.stderr, flush=True)
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
        tb = _user_traceback(exc.__traceback__) if traceback else None
        if tb is not None:
            self.shell.showtraceback((type(exc), exc, tb))
        if captured and not args.no_view:
            from .widget import ExplorationWidget

            display(ExplorationWidget(exploration))


# -- running a program cell ---------------------------------------------------------------


def _exec(stmts: list[ast.stmt], filename: str, ns: dict[str, Any]) -> None:
    if stmts:
        exec(compile(ast.Module(stmts, []), filename, "exec"), ns)


@contextlib.contextmanager
def _compiled(target: str, ns: dict[str, Any], kwargs: dict[str, Any]) -> Iterator[None]:
    """``ns[target]`` compiled with torch.compile while the block runs, then as it was."""
    import torch

    obj = ns[target]
    if isinstance(obj, type) and issubclass(obj, torch.nn.Module):
        had_own = "forward" in obj.__dict__
        original = obj.__dict__.get("forward")
        obj.forward = torch.compile(obj.forward, **kwargs)  # type: ignore[method-assign]
        try:
            yield
        finally:
            if had_own:
                obj.forward = original  # type: ignore[method-assign]
            else:
                del obj.forward
        return
    if isinstance(obj, type) or not callable(obj):
        what = "class that is not an nn.Module" if isinstance(obj, type) else type(obj).__name__
        msg = (
            f"--target {target}: {target} is a {what}; pass a function, an nn.Module or an "
            "nn.Module class."
        )
        raise UsageError(msg)
    compiled = torch.compile(obj, **kwargs)
    ns[target] = compiled
    try:
        yield
    finally:
        if ns.get(target) is compiled:
            ns[target] = obj


def _check_compile_options(kwargs: dict[str, Any]) -> None:
    """Let torch.compile reject bad options before anything runs (it checks them eagerly)."""
    import torch

    try:
        torch.compile(lambda: None, **kwargs)
    except Exception as exc:
        text = str(exc).split(", known options are", 1)[0].strip()
        raise UsageError(f"torch.compile rejected the options: {text}") from None


def _program_failure(
    exc: BaseException, error: Any, target: str, args: argparse.Namespace, filename: str
) -> str:
    """The cell's one-paragraph message for ``error`` (``compiler.classify_failure``)."""
    import compiler

    first = (str(exc).strip().splitlines() or [""])[0].rstrip(".")
    line = _cell_line(exc.__traceback__, filename)
    at = f" at line {line} of the cell" if line else ""
    if isinstance(error, compiler.InputError):
        return (
            f"The cell raised {type(exc).__name__}{at}: {first}. {target} was compiled while "
            "it ran; run the cell without %%compile to see whether it fails eagerly too."
        )
    exploration = error.exploration
    where = ""
    if exploration is not None and exploration.graph_breaks:
        location = exploration.graph_breaks[-1].location
        where = f" at {location}" if location is not None else ""
    where = where or _user_code_location(exc, filename) or at
    backend = args.backend or "inductor"
    if error.stage == "dynamo":  # a graph break under --fullgraph
        hint = (
            "Remove --fullgraph to let torch.compile split the graph there, or change the "
            "code so Dynamo can trace it."
        )
    elif error.stage == "dynamic":  # mark_dynamic on a size the code specialises
        hint = (
            "A dimension marked dynamic was specialised by the code: use "
            "torch._dynamo.maybe_mark_dynamic instead of mark_dynamic, or remove the mark."
        )
    else:
        hint = (
            "If the cell also fails without %%compile, the bug is in the code; otherwise try "
            "--backend aot_eager to see whether AOTAutograd or the backend fails."
        )
    return (
        f"torch.compile failed on {target} ({backend} backend){where}: "
        f"{type(exc).__name__}: {first}. {hint}"
    )


def _user_code_location(exc: BaseException, filename: str) -> str:
    """`` at line N of the cell`` for the user line a Dynamo error names last."""
    from compiler.link.user_code import error_location

    loc = error_location(exc)
    if loc is None:
        return ""
    return f" at line {loc.line} of the cell" if loc.filename == filename else f" at {loc}"


# -- tracebacks -------------------------------------------------------------------------------


def _skipped_dirs() -> tuple[str, ...]:
    import torch

    import compiler

    return tuple(
        os.path.dirname(os.path.abspath(m.__file__ or "")) + os.sep
        for m in (torch, compiler, sys.modules[__name__])
    )


def _user_traceback(tb: types.TracebackType | None) -> types.TracebackType | None:
    """``tb`` without the frames of torch, compiler/ and explorer/ (the user's frames)."""
    skip = _skipped_dirs()
    kept: list[types.TracebackType] = []
    while tb is not None:
        if not os.path.abspath(tb.tb_frame.f_code.co_filename).startswith(skip):
            kept.append(tb)
        tb = tb.tb_next
    chain: types.TracebackType | None = None
    for entry in reversed(kept):
        chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return chain


def _cell_line(tb: types.TracebackType | None, filename: str) -> int | None:
    line = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


# -- small checks ---------------------------------------------------------------------------


def _register_source(cell: str, count: int | None) -> str:
    """Put the cell's source in ``linecache`` under ``<compile-cell-N>``; returns the name."""
    lines = cell.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    base = f"<compile-cell-{count or 0}"
    name, n = f"{base}>", 1
    while name in linecache.cache and linecache.cache[name][2] != lines:
        n += 1
        name = f"{base}.{n}>"
    # mtime None: linecache.checkcache keeps the entry (as IPython does for its cells).
    linecache.cache[name] = (len(cell), None, lines, name)
    return name


def _definitions(tree: ast.Module) -> dict[str, int]:
    """Top-level def/class names of the cell, each with the index of its last definition."""
    defs: dict[str, int] = {}
    for i, stmt in enumerate(tree.body):
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            defs.pop(stmt.name, None)
            defs[stmt.name] = i
    return defs


def _compile_kwargs(
    args: argparse.Namespace, options: dict[str, Any] | None, *, default_backend: bool
) -> dict[str, Any]:
    kwargs: dict[str, Any] = {"dynamic": args.dynamic, "fullgraph": args.fullgraph}
    if args.backend is not None or default_backend:
        kwargs["backend"] = args.backend or "inductor"
    if args.mode is not None:
        kwargs["mode"] = args.mode
    if options is not None:
        kwargs["options"] = options
    return kwargs


def _option_text(value: Any) -> str:
    return value if isinstance(value, str) else repr(value)


def _check_name(flag: str, name: str | None) -> None:
    if name is not None and not name.isidentifier():
        raise UsageError(f"{flag} {name!r} is not a Python name.")


def _ends_with_semicolon(cell: str) -> bool:
    """Whether the cell's last token is ``;`` (which silences its result, as in IPython)."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(cell).readline))
    except (tokenize.TokenError, SyntaxError):
        return False
    skip = {tokenize.ENDMARKER, tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT}
    for token in reversed(tokens):
        if token.type not in skip:
            return token.type == tokenize.OP and token.string == ";"
    return False


__all__ = ["CompileMagics"]

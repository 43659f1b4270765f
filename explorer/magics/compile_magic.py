"""The ``%%compile`` cell magic: run a cell under torch.compile and show the explorer.

The magic reads its options and the cell, keeps the cell's source in IPython's compiler
cache (so tracebacks, ``inspect`` and Dynamo show the cell's own lines) and hands the
rest to the compiler's ``explore_cell``, which runs the cell's code with IPython's own
``shell.compile`` and ``shell.ev`` and records what it compiles. The two cell shapes
(a snippet compiled as a function of what it reads, or a cell that defines and calls
its target) and every option check and failure message are the compiler's.
"""

from __future__ import annotations

import argparse
import ast
import sys
import types
from typing import Any

from IPython.core.displayhook import DisplayHook
from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

from compiler.capture.cell import definitions, explore_cell
from compiler.capture.spec import CompileSpec
from compiler.link.user_code import compiled_files, is_user_file

from .._progress import showing_progress


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
        "--reset", action="store_true",
        help="reset Dynamo for the whole process first (torch.compiler.reset()): everything "
        "compiled earlier compiles again on its next call; ids start at 0/0",
    )  # fmt: skip
    @argument(
        "--no-reset", action="store_true",
        help="the default (kept for old cells): compile beside what was compiled before",
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

        What it does to the process: the cell runs once. While it runs, capture adds log
        handlers, a bytecode hook and a few config flags (Inductor provenance tracking on,
        the FX graph and AOTAutograd caches off), and every compiled call of the cell (the
        cell or its target, and functions or modules compiled in earlier cells that it
        calls) compiles with a backend of its own, beside what was compiled before; all of
        it is restored after, also when the cell raises. The cell's cache entries are
        dropped after the cell: functions compiled earlier keep theirs untouched and do
        not compile again. If torch marked the target to run eagerly (an earlier compile
        of it failed), the mark is lifted for the cell and put back after it, and
        Dynamo's record of the sizes code was called with is set aside for the cell and
        put back; its compile counter goes on. A failure of the explorer's own work (a
        recording hook, a parser) never reaches the cell's run: it is shown as a stage
        error with its traceback. --reset resets Dynamo for the whole process instead.
        """
        import compiler

        args = parse_argstring(self.compile_cell, line)
        _check_name("NAME", args.name)
        _check_name("--target", args.target)
        if args.no_view and not args.name:
            raise UsageError(
                "--no-view keeps only the stored Exploration: give a NAME to store it."
            )
        spec = CompileSpec(
            backend=args.backend or "inductor", mode=args.mode, dynamic=args.dynamic,
            fullgraph=args.fullgraph, options=self._options(args.options) or {},
            keep_caches=args.keep_caches,
        )  # fmt: skip
        if args.live:
            self._run_live(args, line, cell, spec)
            return
        number = self._cell_number()
        filename = self.shell.compile.cache(cell, number)
        tree = self._parse(cell, filename)
        if tree is None:
            return
        target = self._target(args.target, tree)
        ns = self.shell.user_ns
        with showing_progress():
            try:
                run = explore_cell(
                    tree, filename, ns, target=target, name=f"cell_{number}", spec=spec,
                    reset=args.reset and not args.no_reset, decompile=not args.no_decompile,
                    compile_code=self.shell.compile, run_code=self.shell.ev,
                )  # fmt: skip
            except (compiler.OptionError, compiler.TargetError) as exc:
                flag = f"--target {target}: " if isinstance(exc, compiler.TargetError) else ""
                raise UsageError(f"{flag}{exc}") from None
            except compiler.ExploreError as exc:
                self._report(exc, args, filename)
                return
        if run.has_value and not DisplayHook.semicolon_at_end_of_expression(cell):
            self.shell.displayhook(run.value)
        if not run.exploration.compiles:
            empty = (
                "torch.compile found nothing to compile in the cell: it runs no tensor "
                "operations on the variables it reads."
                if target is None
                else f"nothing was compiled: {target} was not called while the cell ran (or ran "
                "no tensor operations). Call it in the cell, after its definition."
            )
            print(f"%%compile: {empty}", file=sys.stderr, flush=True)
        if args.name:
            ns[args.name] = run.exploration
        if not args.no_view:
            from ..widget import ExplorationWidget

            display(ExplorationWidget(run.exploration))

    def _run_live(self, args: argparse.Namespace, line: str, cell: str, spec: CompileSpec) -> None:
        import compiler

        from ..editing.live import live

        if args.inputs is None:
            raise UsageError("--live needs the example inputs: --inputs EXPR (e.g. --inputs x).")
        try:
            inputs = eval(args.inputs, self.shell.user_ns)
        except Exception as exc:
            msg = f"--inputs {args.inputs}: evaluating it failed with {type(exc).__name__}: {exc}."
            raise UsageError(msg) from None
        inputs = inputs if isinstance(inputs, tuple) else (inputs,)
        # the cell's names (helpers, globals, classes of earlier cells) cross to the worker
        try:
            widget = live(cell, *inputs, target=args.target,
                          magic_line=f"%%compile {line}".strip(), namespace=self.shell.user_ns,
                          **spec.kwargs())  # fmt: skip
        except compiler.OptionError as exc:
            raise UsageError(str(exc)) from None
        if args.name:
            self.shell.user_ns[args.name] = widget
        display(widget)

    # -- reading the options and the cell ---------------------------------------------------

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

    def _parse(self, cell: str, filename: str) -> ast.Module | None:
        """The cell's AST, IPython syntax such as ``%time`` translated (None after showing
        a syntax error)."""
        try:
            return self.shell.compile.ast_parse(cell, filename)
        except SyntaxError:
            pass
        try:
            # Only when needed: the translation drops leading blank lines (shifting lines).
            return self.shell.compile.ast_parse(self.shell.transform_cell(cell), filename)
        except SyntaxError:
            self.shell.showsyntaxerror(filename)
            return None

    def _target(self, target: str | None, tree: ast.Module) -> str | None:
        """--target, or the cell's only def/class; None for a snippet."""
        defs = definitions(tree)
        if target is None:
            if len(defs) > 1:
                names = ", ".join(defs)
                msg = f"the cell defines {names}: pick the one to compile with --target NAME."
                raise UsageError(msg)
            return next(iter(defs), None)
        if target not in defs and target not in self.shell.user_ns:
            known = ", ".join(defs) or "none"
            msg = (
                f"--target {target}: no such name in the cell (its defs and classes: {known}) "
                "or in the notebook. Define it first, or check the spelling."
            )
            raise UsageError(msg)
        return target

    # -- a failure ----------------------------------------------------------------------------

    def _report(self, error: Any, args: argparse.Namespace, filename: str) -> None:
        """One paragraph on stderr (the compiler's message), the user's frames of the
        traceback for an error in the user's code, and what was captured.

        What the code raised becomes ``sys.last_value`` (as IPython does for any error),
        so ``%tb`` prints torch's full message and ``%debug`` opens where it was raised.
        """
        import compiler

        exc = error.__cause__ or error
        exploration = error.exploration
        captured = exploration is not None and bool(exploration.compiles)
        user_error = isinstance(error, compiler.InputError)
        text = f"{type(error).__name__}: {error}"
        if captured and not args.no_view:
            text += " The compiles recorded before the failure are shown below."
        if args.name:
            text += f" {args.name} was left as it was."
        if not user_error:
            text += " %tb prints the full error."
        print(text, file=sys.stderr, flush=True)
        sys.last_type, sys.last_value, sys.last_traceback = type(exc), exc, exc.__traceback__
        compiled = compiled_files(exploration.compiles if exploration else ())
        tb = _cell_traceback(exc.__traceback__, filename, compiled) if user_error else None
        if tb is not None:
            self.shell.showtraceback((type(exc), exc, tb))
        if captured and not args.no_view:
            from ..widget import ExplorationWidget

            display(ExplorationWidget(exploration))


def _cell_traceback(
    tb: types.TracebackType | None, filename: str, compiled: frozenset[str]
) -> types.TracebackType | None:
    """``tb`` from the cell's first frame on, user code only (``is_user_file``): what
    IPython shows for an error in a plain cell."""
    kept: list[types.TracebackType] = []
    while tb is not None:
        name = tb.tb_frame.f_code.co_filename
        if (kept or name == filename) and is_user_file(name, compiled):
            kept.append(tb)
        tb = tb.tb_next
    chain: types.TracebackType | None = None
    for entry in reversed(kept):
        chain = types.TracebackType(chain, entry.tb_frame, entry.tb_lasti, entry.tb_lineno)
    return chain


def _check_name(flag: str, name: str | None) -> None:
    if name is not None and not name.isidentifier():
        raise UsageError(f"{flag} {name!r} is not a Python name.")


__all__ = ["CompileMagics"]

"""The ``%%compare`` cell magic: time a cell's last expression eagerly and compiled.

The cell's statements before its last expression run once, as in a normal cell (set
up a model, inputs); the last expression is what gets compared: it becomes the body
of a function reading the notebook's variables, run eagerly and under each
configuration by ``compiler.compare``. The table, the bar chart and each row's
explorer appear under the cell.
"""

from __future__ import annotations

import ast
import sys
from collections.abc import Callable
from types import CodeType
from typing import Any

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, magics_class, no_var_expand
from IPython.core.magic_arguments import argument, magic_arguments, parse_argstring
from IPython.display import display

__all__ = ["CompareMagics"]


@magics_class
class CompareMagics(Magics):
    """``%%compare``: the compile-and-compare lab for one expression."""

    @no_var_expand
    @magic_arguments("%compare")
    @argument(
        "name", nargs="?", default=None,
        help="store the Comparison in this notebook variable",
    )  # fmt: skip
    @argument(
        "--configs", metavar="A,B", default=None,
        help="comma-separated presets or backends: aot_eager, default, dynamic, static, "
        "reduce-overhead, max-autotune, max-autotune-no-cudagraphs, or any name of "
        "torch.compiler.list_backends() (default: those that apply on this device)",
    )  # fmt: skip
    @argument("--steps", type=int, default=20, help="timed calls per configuration")
    @argument("--warmup", type=int, default=3, help="untimed calls before timing")
    @argument(
        "--no-record", action="store_true",
        help="do not record the compiles (rows then link to no explorer; first calls "
        "time torch.compile alone)",
    )  # fmt: skip
    @argument("--log", metavar="PATH", default=None, help="also write the compile log there")
    @cell_magic("compare")
    def compare_cell(self, line: str, cell: str) -> None:
        """Compare the cell's last expression eagerly and under torch.compile configurations.

        Statements before the last expression run once first (setup). The last expression
        is timed: first call (compile included), then steady state after warm-up.
        """
        import compiler

        from .._progress import showing_progress
        from ..compare_widget import CompareView
        from ..compile_log import compile_log

        args = parse_argstring(self.compare_cell, line)
        if args.name is not None and not args.name.isidentifier():
            raise UsageError(f"NAME {args.name!r} is not a Python name.")
        configs = None
        if args.configs:
            configs = [c.strip() for c in args.configs.split(",") if c.strip()]
        count = int(self.shell.execution_count or 1)
        # IPython's compiler cache keeps the cell's source, so nodes and tracebacks point at it
        filename = self.shell.compile.cache(cell, count - 1 if count > 1 else count)
        try:
            tree = self.shell.compile.ast_parse(cell, filename)
        except SyntaxError:
            self.shell.showsyntaxerror(filename)
            return
        if not tree.body or not isinstance(tree.body[-1], ast.Expr):
            raise UsageError(
                "%%compare times the cell's last expression (e.g. model(x)): end the cell "
                "with the call to compare."
            )
        ns = self.shell.user_ns
        *setup, last = tree.body
        if setup:
            self.shell.ex(self.shell.compile(ast.Module(setup, []), filename, "exec"))
        target = _expression_function(last, filename, ns, self.shell.compile)
        try:
            with showing_progress("compare") as status:
                comparison = compiler.compare(
                    target, configs=configs, steps=args.steps, warmup=args.warmup,
                    record=not args.no_record, progress=lambda p: status(str(p)),
                )  # fmt: skip
        except compiler.OptionError as exc:
            raise UsageError(str(exc)) from None
        except compiler.InputError as exc:
            print(f"%%compare: {exc}", file=sys.stderr, flush=True)
            return
        if args.name:
            ns[args.name] = comparison
        if args.log:
            with open(args.log, "w", encoding="utf-8") as f:
                f.write(compile_log(comparison))
        display(CompareView(comparison))


def _expression_function(
    expr: ast.Expr, filename: str, ns: dict[str, Any], compile_code: Callable[..., CodeType]
) -> Any:
    """``def compared(): return <expr>`` with the notebook as its globals, lines kept."""
    body = ast.Return(value=expr.value)
    ast.copy_location(body, expr)
    func = ast.FunctionDef(
        name="compared",
        args=ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[]),
        body=[body],
        decorator_list=[],
        returns=None,
        type_params=[],
    )
    ast.copy_location(func, expr)
    module = ast.Module(body=[func], type_ignores=[])
    ast.fix_missing_locations(module)
    scope: dict[str, Any] = {}
    exec(compile_code(module, filename, "exec"), ns, scope)
    function = scope["compared"]
    function.__qualname__ = ast.unparse(expr.value)  # the name the table shows
    return function

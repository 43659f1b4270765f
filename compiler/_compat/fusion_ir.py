"""Inductor's fusion IR logs (``ir_pre_fusion``/``ir_post_fusion``): their loggers, and writing
them with less work while a capture compiles.
"""

from __future__ import annotations

import contextlib
import logging
import re
import weakref
from collections.abc import Iterator
from typing import Any

# Artifact loggers of torch._inductor.debug that print the scheduler's nodes before
# and after fusion (checked on torch 2.11 and 2.13: `getArtifactLogger` names them
# "<module>.__<artifact>").
FUSION_IR_ARTIFACTS = ("ir_pre_fusion", "ir_post_fusion")


def fusion_ir_logger(artifact: str) -> logging.Logger:
    """The artifact logger for ``ir_pre_fusion`` or ``ir_post_fusion`` (torch 2.11, 2.13)."""
    import torch._inductor.debug  # noqa: F401  (registers the artifact loggers)

    return logging.getLogger(f"torch._inductor.debug.__{artifact}")


@contextlib.contextmanager
def fusion_ir_formatted_once() -> Iterator[bool]:
    """While active, Inductor writes the same ``ir_pre_fusion``/``ir_post_fusion`` text
    with less work; yields whether the speed-up is in place (False: torch changed, and
    the logs are formatted as torch does it).

    The text must be written while the scheduler runs (its nodes change afterwards), and
    most of its cost is repeated work: the post-fusion log formats every loop body the
    pre-fusion log formatted already (each a throw-away ``GraphModule`` built and
    compiled to print its code), and both print the same sympy index expressions
    thousands of times. So around each ``DebugFormatter._write_ir`` call (torch 2.13:
    the formatter of both logs), sympy's ``Printable.__str__``/``__repr__`` remember each
    expression's text (sympy expressions are immutable), and ``LoopBodyBlock.debug_str``
    reuses a block's text while its FX graph still has the same nodes, targets and
    arguments, and prints a new block's code without building and compiling the module
    torch builds only to read its ``.code`` (``_loop_block_text``: checked against
    torch's own text on the first blocks of each capture, and not used if they differ).
    All of it is restored after each call and at exit.
    """
    try:
        from sympy.core._print_helpers import Printable  # type: ignore[import-untyped]
        from torch._inductor.debug import DebugFormatter
        from torch._inductor.loop_body import LoopBodyBlock

        write_ir = DebugFormatter.__dict__["_write_ir"]
        block_text = LoopBodyBlock.__dict__["debug_str"]
        printable = (Printable.__dict__["__str__"], Printable.__dict__["__repr__"])
    except (ImportError, KeyError):
        yield False
        return
    original_write = write_ir.__func__ if isinstance(write_ir, staticmethod) else write_ir
    blocks: weakref.WeakKeyDictionary[Any, dict[str, tuple[tuple[Any, ...], str]]]
    blocks = weakref.WeakKeyDictionary()
    checks = {"left": _BLOCKS_CHECKED, "same": True}

    def code_text(block: Any, name: str) -> str:
        if checks["left"] == 0 and checks["same"]:
            return _loop_block_text(block, name)
        text: str = block_text(block, name)
        if checks["left"] > 0:
            checks["left"] -= 1
            try:
                checks["same"] = checks["same"] and _loop_block_text(block, name) == text
            except Exception:  # torch changed how blocks print: keep torch's own way
                checks["same"] = False
        return text

    def block_debug_str(self: Any, name: str = "block") -> str:
        shape = tuple(
            (n.name, n.op, n.target, n.args, tuple(n.kwargs.items())) for n in self.graph.nodes
        )
        known = blocks.setdefault(self, {}).get(name)
        if known is not None and known[0] == shape:
            return known[1]
        text = code_text(self, name)
        blocks[self][name] = (shape, text)
        return text

    def formatted(nodes: Any) -> Any:
        texts: dict[Any, str] = {}

        def text_of(expr: Any) -> str:
            try:
                return texts[expr]
            except KeyError:
                text: str = printable[0](expr)
                texts[expr] = text
                return text
            except TypeError:  # an unhashable printable: print it as sympy does
                return str(printable[0](expr))

        Printable.__str__ = Printable.__repr__ = text_of
        LoopBodyBlock.debug_str = block_debug_str  # type: ignore[method-assign]
        try:
            return original_write(nodes)
        finally:
            Printable.__str__, Printable.__repr__ = printable
            LoopBodyBlock.debug_str = block_text  # type: ignore[method-assign]

    DebugFormatter._write_ir = staticmethod(formatted)  # type: ignore[method-assign]
    try:
        yield True
    finally:
        DebugFormatter._write_ir = write_ir  # type: ignore[method-assign]


_BLOCKS_CHECKED = 3  # loop-body blocks printed both ways per capture, to compare


def _loop_block_text(block: Any, name: str) -> str:
    """What ``LoopBodyBlock.debug_str(name)`` returns, from the block's FX graph's code
    as ``GraphModule.recompile`` generates it (torch 2.13), without the module."""
    from torch.fx.experimental import _config as fx_experimental_config

    code = block.graph.python_code(
        root_module="self", record_func=fx_experimental_config.enrich_profiler_metadata
    ).src
    code = code.strip().replace("def forward(", f"def {name}(")
    return re.sub(r";[^\n]*", "", code)  # as torch does: drop the `; del x` suffixes

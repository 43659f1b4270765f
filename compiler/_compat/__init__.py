"""Every use of torch's private internals, in one place.

Each function fetches one thing and says which torch version it was checked on.
A torch upgrade should touch this file only; ``tests/test_compat.py`` calls every
function here on the installed torch.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import re
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

import torch

from compiler import _torch_files

# Dynamo's per-code cache lives in its own module; callers reach it through this one
from compiler._compat.code_cache import (
    OwnCompiles as OwnCompiles,
)
from compiler._compat.code_cache import (
    compile_isolation as compile_isolation,
)
from compiler._compat.code_cache import (
    compiled_codes as compiled_codes,
)
from compiler._compat.code_cache import (
    evict_backend as evict_backend,
)
from compiler._compat.code_cache import (
    evict_compiled as evict_compiled,
)
from compiler._compat.code_cache import (
    frame_compile_counts as frame_compile_counts,
)
from compiler._compat.code_cache import (
    fresh_backend as fresh_backend,
)
from compiler._compat.code_cache import (
    own_compiles as own_compiles,
)
from compiler._compat.code_cache import (
    owns_compiles as owns_compiles,
)

# The oldest torch the tests cover: the GPU machine's 2.11 (CUDA, Python 3.12); CI runs
# the suite on 2.13 (CPU) and a smoke set on 2.14.1. pyproject.toml's lower bound.
OLDEST_TORCH = (2, 11)


def torch_release(version: str | None = None) -> tuple[int, int]:
    """(major, minor) of ``torch.__version__`` or of ``version``.

    Example:
        >>> torch_release("2.14.1+cu130"), torch_release("2.16.0.dev20261101")
        ((2, 14), (2, 16))
    """
    found = re.match(r"(\d+)\.(\d+)", version or str(torch.__version__))
    return (int(found.group(1)), int(found.group(2))) if found else (0, 0)


def require_supported_torch(version: str | None = None) -> None:
    """Raise ImportError with what to do when torch is older than the tests cover: the
    private hooks this module uses (the bytecode hook, the structured trace's records,
    Inductor's artifact loggers) differ before it."""
    if torch_release(version) < OLDEST_TORCH:
        oldest = ".".join(map(str, OLDEST_TORCH))
        msg = (
            f"torch-compile-explorer needs torch {oldest} or newer, and this is torch "
            f"{version or torch.__version__}: the compiler hooks it reads changed before "
            f"{oldest}. Upgrade torch (pip install 'torch>={oldest}') and restart the kernel."
        )
        raise ImportError(msg)


require_supported_torch()

# Artifact loggers of torch._inductor.debug that print the scheduler's nodes before
# and after fusion (checked on torch 2.11 and 2.13: `getArtifactLogger` names them
# "<module>.__<artifact>").
FUSION_IR_ARTIFACTS = ("ir_pre_fusion", "ir_post_fusion")


def trace_logger() -> logging.Logger:
    """The structured-trace logger that TORCH_TRACE writes from (``torch.__trace``).

    Records carry ``metadata`` (a dict naming the event) and ``payload`` (text).
    Checked on torch 2.11 and 2.13 (``torch._logging._internal.trace_log``).
    """
    from torch._logging._internal import trace_log

    return trace_log


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


def current_compile_id() -> tuple[int | None, int | None, int, int | None] | None:
    """(frame_id, frame_compile_id, attempt, compiled_autograd_id) of the compile now
    running, or None outside a compile (``torch._guards.CompileContext``, 2.11/2.13)."""
    from torch._guards import CompileContext

    trace_id = CompileContext.current_trace_id()
    if trace_id is None:
        return None
    cid = trace_id.compile_id
    return (cid.frame_id, cid.frame_compile_id, trace_id.attempt, cid.compiled_autograd_id)


def register_bytecode_hook(hook: Callable[[CodeType, CodeType], CodeType | None]) -> Any:
    """Call ``hook(original, transformed)`` for every frame Dynamo converts; returns a
    handle with ``.remove()`` (``torch._dynamo.convert_frame.register_bytecode_hook``,
    2.11/2.13). The hook must return None so the transformed code is kept."""
    from torch._dynamo.convert_frame import register_bytecode_hook as register

    return register(hook)  # type: ignore[arg-type]  # BytecodeHook is a Protocol of this shape


def profiler_running() -> bool:
    """Whether a ``torch.profiler`` (or autograd profiler) is recording now: a second one
    cannot start inside it (``torch.autograd._profiler_enabled``, torch 2.11/2.13).

    >>> profiler_running()
    False
    """
    import torch

    return bool(torch.autograd._profiler_enabled())  # type: ignore[attr-defined]


@contextlib.contextmanager
def patched_configs(inductor: dict[str, Any], functorch: dict[str, Any]) -> Iterator[None]:
    """Set inductor and functorch config values, restoring them on exit, also on error.

    Uses each config module's own ``patch`` (torch 2.11/2.13 ``ConfigModule.patch``).
    """
    import torch._functorch.config as functorch_config
    import torch._inductor.config as inductor_config

    with inductor_config.patch(inductor), functorch_config.patch(functorch):
        yield


def patched_dynamo_config(values: dict[str, Any]) -> contextlib.AbstractContextManager[None]:
    """Set ``torch._dynamo.config`` values for one block (its ``ConfigModule.patch``,
    torch 2.11/2.13); a set-valued setting gets the set given, restored on exit."""
    import torch._dynamo.config as dynamo_config

    return dynamo_config.patch(values)  # type: ignore[no-any-return]


# settings renamed between torch versions: the newer name, and the older one it replaced
_DYNAMO_RENAMED = {"ignore_logging_functions": "ignore_logger_methods"}


def dynamo_config_name(name: str) -> str:
    """``name`` as this torch spells it: ``ignore_logging_functions`` (torch 2.13) was
    ``ignore_logger_methods`` before (still an alias on 2.13)."""
    import torch._dynamo.config as dynamo_config

    old = _DYNAMO_RENAMED.get(name)
    if old is not None and not hasattr(dynamo_config, name) and hasattr(dynamo_config, old):
        return old
    return name


def dynamo_config_value(name: str) -> Any:
    """The current value of a ``torch._dynamo.config`` setting."""
    import torch._dynamo.config as dynamo_config

    return getattr(dynamo_config, dynamo_config_name(name))


def inductor_option_names() -> frozenset[str]:
    """Names accepted in ``torch.compile(options=...)`` (``torch._inductor.list_options``)."""
    import torch._inductor

    return frozenset(torch._inductor.list_options())


def inductor_mode_names() -> frozenset[str]:
    """Values accepted as ``torch.compile(mode=...)`` (``torch._inductor.list_mode_options``)."""
    import torch._inductor

    return frozenset(torch._inductor.list_mode_options())


def is_compiled(obj: object) -> bool:
    """Whether ``obj`` is already the result of ``torch.compile`` (module or function)."""
    from torch._dynamo.eval_frame import OptimizedModule

    if isinstance(obj, OptimizedModule):
        return True
    # torch.compiler.disable wraps a function the same way (torch 2.13 sets
    # _torchdynamo_orig_callable on both), but runs it eagerly: not compiled code.
    if getattr(obj, "_torchdynamo_disable", False):
        return False
    return hasattr(obj, "_torchdynamo_orig_callable")


def is_graph_break_error(exc: BaseException) -> bool:
    """Whether ``exc`` is Dynamo refusing to trace something (``torch._dynamo.exc.Unsupported``)."""
    from torch._dynamo.exc import Unsupported

    return isinstance(exc, Unsupported)


def is_backend_failure(exc: BaseException) -> bool:
    """Whether ``exc`` is a backend compiler failing (``BackendCompilerFailed``)."""
    from torch._dynamo.exc import BackendCompilerFailed

    return isinstance(exc, BackendCompilerFailed)


@functools.cache
def graph_break_registry() -> dict[str, tuple[dict[str, Any], ...]]:
    """The graph-break registry: id (``GB0025``) -> its entries, the current one first,
    then the wordings it had before (``Gb_type``, ``Context``, ``Explanation``,
    ``Hints``), each with ``Link``, its page as ``torch._dynamo.exc.get_gbid_documentation_link``
    builds it ("" where torch has none).

    Read as a file without importing torch (``compiler._torch_files``, so the trace path
    runs where torch is absent): the installed torch's
    ``torch/_dynamo/graph_break_registry.json`` (torch 2.13: 517 ids, 2.14.1: 561), else
    the copy this package ships. Read once per process.

    Example:
        >>> graph_break_registry()["GB0025"][0]["Gb_type"]
        'Call to `torch._dynamo.graph_break()`'
    """
    return _torch_files.graph_break_registry()


def is_dynamo_error(exc: BaseException) -> bool:
    """Whether ``exc`` was raised by torch.compile's machinery rather than user code."""
    from torch._dynamo.exc import TorchDynamoException

    return isinstance(exc, TorchDynamoException)


def is_constraint_violation(exc: BaseException) -> bool:
    """Whether ``exc`` says a dimension marked dynamic was specialised by the code."""
    try:
        from torch.fx.experimental.symbolic_shapes import ConstraintViolationError
    except ImportError:  # moved or renamed: such failures fall back to the generic class
        return False
    return isinstance(exc, ConstraintViolationError)


def traced_line(frame: Any, filename: str) -> int | None:
    """The line of ``filename`` that Dynamo is tracing in ``frame``, if ``frame`` is one of
    its instruction translators' methods (their ``self`` has ``f_code`` and ``lineno``):
    where a compile that hangs is, when the user's code is being traced, not run."""
    tx = frame.f_locals.get("self")
    code = getattr(tx, "f_code", None)
    if isinstance(code, CodeType) and code.co_filename == filename:
        line = getattr(tx, "lineno", None)
        return line if isinstance(line, int) else None
    return None


def dynamo_config_snapshot() -> dict[str, Any]:
    """Dynamo's config as a dict, to check capture leaves it unchanged."""
    import torch._dynamo.config as dynamo_config

    return dict(dynamo_config.get_config_copy())


def inductor_config_snapshot() -> dict[str, Any]:
    """Inductor's config as a dict, to check capture leaves it unchanged."""
    import torch._inductor.config as inductor_config

    return dict(inductor_config.get_config_copy())


def functorch_config_snapshot() -> dict[str, Any]:
    """AOTAutograd's (functorch) config as a dict, to check capture leaves it unchanged."""
    import torch._functorch.config as functorch_config

    return dict(functorch_config.get_config_copy())


def interned_strings() -> dict[int, str]:
    """torch's process-wide table of interned file names, index -> name.

    Trace events name files by index, and torch logs each ``str`` entry only the
    first time it interns it (``torch._logging.structured.INTERN_TABLE``, 2.11/2.13),
    so a capture that starts after an earlier compile must seed its table from here.
    """
    from torch._logging.structured import INTERN_TABLE

    return {index: name for name, index in INTERN_TABLE.items()}


def counters_snapshot() -> dict[str, int]:
    """Dynamo's and Inductor's event counters, flattened to ``group.name``
    (``torch._dynamo.utils.counters``, torch 2.11/2.13): graph breaks, unique graphs,
    cudagraph partitions and skips, cache hits, ..."""
    from torch._dynamo.utils import counters

    return {
        f"{group}.{name}": int(value)
        for group, values in counters.items()
        for name, value in values.items()
        if isinstance(value, int)
    }


def add_autotune_listener(listener: Callable[..., None]) -> Callable[[], None]:
    """Call ``listener(timings, name, input_nodes, choices, ...)`` whenever Inductor's
    algorithm selection (max-autotune) has benchmarked its choices; returns a function
    that removes exactly this listener (``select_algorithm.add_feedback_saver``, torch
    2.11/2.13; torch only offers clearing all of them, which would drop the user's)."""
    from torch._inductor import select_algorithm

    select_algorithm.add_feedback_saver(listener)

    def remove() -> None:
        savers = select_algorithm.get_algorithm_selector_cache().feedback_saver_fns
        if listener in savers:
            savers.remove(listener)

    return remove


def cudagraph_trees_logger() -> logging.Logger:
    """The ``cudagraphs`` artifact logger of Inductor's CUDA graph trees: at DEBUG it
    says when it warms up or records a function, with the compile id as the first
    argument (``getArtifactLogger(__name__, "cudagraphs")``, torch 2.11/2.13)."""
    import torch._inductor.cudagraph_trees  # noqa: F401  (registers the logger)

    return logging.getLogger("torch._inductor.cudagraph_trees.__cudagraphs")


# The artifacts torch tells CUDA graphs' story through: ``cudagraphs`` (the scheduler's
# partitions, cudagraph_utils' skip reasons, cudagraph_trees' trees, warm-ups and
# recordings) and ``perf_hints`` (Inductor's hints, some about CUDA graphs).
CUDAGRAPH_ARTIFACTS = ("cudagraphs", "perf_hints")


def cudagraph_loggers() -> list[logging.Logger]:
    """Every registered artifact logger of ``CUDAGRAPH_ARTIFACTS``: torch names each
    ``<module>.__<artifact>`` and registers it (``getArtifactLogger``, 2.11/2.13); the
    modules that say most about CUDA graphs are imported first so theirs exist.

    >>> "torch._inductor.scheduler.__cudagraphs" in [lg.name for lg in cudagraph_loggers()]
    True
    """
    import torch._inductor.cudagraph_trees
    import torch._inductor.cudagraph_utils
    import torch._inductor.scheduler  # noqa: F401
    from torch._logging._internal import log_registry

    names: set[str] = log_registry.get_artifact_log_qnames()  # type: ignore[no-untyped-call]
    return [
        logging.getLogger(q)
        for q in sorted(names)
        if q.rsplit(".__", 1)[-1] in CUDAGRAPH_ARTIFACTS
    ]


def torch_version() -> str:
    """``torch.__version__`` as a string."""
    return str(torch.__version__)


def graph_module_of_trace_call() -> torch.fx.GraphModule | None:
    """The GraphModule whose text the structured-trace record being handled prints, or None.

    Called from a ``torch.__trace`` log handler: the record is emitted inside
    ``torch._logging._internal.trace_structured``, whose ``payload_fn`` is a lambda over
    the graph module for ``dynamo_output_graph``, ``aot_inference_graph`` and the
    pre/post-grad artifacts (checked on torch 2.13; other graphs log a string made
    earlier, and give None). The module's ``node.meta`` holds ``nn_module_stack``,
    which the text omits.
    """
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if code.co_name == "trace_structured" and code.co_filename.endswith("_internal.py"):
            payload_fn = frame.f_locals.get("payload_fn")
            for cell in getattr(payload_fn, "__closure__", None) or ():
                try:
                    value = cell.cell_contents
                except ValueError:  # an empty cell
                    continue
                if isinstance(value, torch.fx.GraphModule):
                    return value
            return None
        frame = frame.f_back  # type: ignore[assignment]
    return None


def triton_cache_dir() -> Path | None:
    """Triton's cache folder in this process: ``TRITON_CACHE_DIR`` (Inductor sets it to
    ``<inductor cache>/triton/<device>`` on its first Triton kernel when the user has
    not: ``torch._inductor.runtime.cache_dir_utils.triton_cache_dir``, torch 2.11/2.13),
    None before any Triton kernel and without Triton."""
    import os

    directory = os.environ.get("TRITON_CACHE_DIR")
    if directory:
        return Path(directory)
    try:
        from torch._inductor.runtime.cache_dir_utils import triton_cache_dir as inductor_dir
    except ImportError:
        return None
    path = Path(inductor_dir(0))
    return path if path.is_dir() else None


def loaded_output_module(path: str) -> ModuleType | None:
    """The output-code module Inductor loaded from ``path`` in this process, whose
    globals hold each Triton kernel's ``CachingAutotuner`` once the compile finished
    (``torch._inductor.codecache.PyCodeCache.modules``/``modules_no_attr``, 2.11/2.13)."""
    if not path:
        return None
    from torch._inductor.codecache import PyCodeCache

    module = PyCodeCache.modules_no_attr.get(path)
    if module is not None:
        return module
    for candidate in reversed(PyCodeCache.modules):
        if getattr(candidate, "__file__", None) == path:
            return candidate
    return None


def cudagraph_input_copy_bytes() -> list[int]:
    """Per recorded CUDA graph of device 0: the bytes cudagraph trees copy into its static
    input buffers before each replay (its non-static tensor inputs, as recorded). From
    ``torch._inductor.cudagraph_trees.get_manager`` and each ``CUDAGraphNode``'s
    ``non_static_input_idx``/``reconstructed_inputs`` (torch 2.11/2.13); empty when
    there are no CUDA graph trees or those names are gone."""
    try:
        from torch._inductor.cudagraph_trees import get_manager

        manager = get_manager(0, create_if_none_exists=False)
    except Exception:  # no CUDA, or the internals moved: report nothing, not a guess
        return []
    if manager is None:
        return []
    sizes = []
    pending = [node for nodes in manager.roots.values() for node in nodes]
    while pending:
        node = pending.pop()
        pending.extend(child for nodes in node.children.values() for child in nodes)
        inputs = getattr(node, "reconstructed_inputs", None)
        indices = getattr(node, "non_static_input_idx", None)
        if inputs is None or indices is None:
            continue
        sizes.append(
            sum(
                inputs[i].nbytes
                for i in indices
                if i < len(inputs) and isinstance(inputs[i], torch.Tensor)
            )
        )
    return sizes


def aoti_compile_and_package(program: Any, package_path: str) -> str:
    """AOTInductor: compile an ``ExportedProgram`` ahead of time into a ``.pt2`` package
    (``torch._inductor.aoti_compile_and_package``, torch 2.6+; checked on 2.13 CPU and
    2.14.1). Returns the package's path."""
    from torch._inductor import aoti_compile_and_package as compile_and_package

    return str(compile_and_package(program, package_path=package_path))

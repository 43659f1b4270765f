"""Every use of torch's private internals, in one package, a module per part of torch it
covers.

Each function fetches one thing and says which torch version it was checked on, so a torch
upgrade touches this package only; ``tests/test_compat.py`` calls every function on the
installed torch. The modules, by what they cover:

- ``versions``: which torch this is, and the oldest one supported;
- ``dynamo``: Dynamo's frames (compile ids, the bytecode hook, converted codes), its errors,
  the graph-break registry and its counters;
- ``configs``: Dynamo's, Inductor's and functorch's config modules;
- ``trace_log``: the structured trace (``torch.__trace``) and its interned file names;
- ``fusion_ir``: Inductor's fusion IR logs;
- ``cudagraphs``: Inductor's CUDA graph trees;
- ``inductor``: what a compile leaves (output-code module, Triton cache, autotune feedback,
  AOTInductor packages);
- ``profiler``: whether torch's profiler records;
- ``code_cache``: Dynamo's per-code cache, what capture compiles beside the user's;
- ``dynamo_globals``: the globals Dynamo installs in the user's namespace;
- ``numerics``: Inductor's intermediates while a compiled program runs.

This module re-exports the names callers use as ``_compat.<name>``: one list is the
surface a torch upgrade checks, and a caller need not know which part of torch a name
covers. ``dynamo_globals`` and ``numerics`` are hooks with a lifetime of their own and are
imported as modules by their one or two callers.
"""

from __future__ import annotations

from compiler._compat.code_cache import (
    OwnCompiles,
    compile_isolation,
    compiled_codes,
    evict_backend,
    evict_compiled,
    frame_compile_counts,
    fresh_backend,
    own_compiles,
    owns_compiles,
)
from compiler._compat.configs import (
    dynamo_config_name,
    dynamo_config_snapshot,
    dynamo_config_value,
    functorch_config_snapshot,
    inductor_config_snapshot,
    inductor_mode_names,
    inductor_option_names,
    patched_configs,
    patched_dynamo_config,
)
from compiler._compat.cudagraphs import (
    CUDAGRAPH_ARTIFACTS,
    cudagraph_input_copy_bytes,
    cudagraph_loggers,
    cudagraph_trees_logger,
)
from compiler._compat.dynamo import (
    converted_codes,
    counters_snapshot,
    current_compile_id,
    graph_break_registry,
    is_backend_failure,
    is_compiled,
    is_constraint_violation,
    is_dynamo_error,
    is_graph_break_error,
    register_bytecode_hook,
    traced_line,
)
from compiler._compat.fusion_ir import (
    FUSION_IR_ARTIFACTS,
    fusion_ir_formatted_once,
    fusion_ir_logger,
)
from compiler._compat.inductor import (
    add_autotune_listener,
    aoti_compile_and_package,
    loaded_output_module,
    triton_cache_dir,
)
from compiler._compat.profiler import (
    profiler_running,
)
from compiler._compat.trace_log import (
    graph_module_of_trace_call,
    interned_strings,
    trace_logger,
)
from compiler._compat.versions import (
    OLDEST_TORCH,
    require_supported_torch,
    torch_release,
    torch_version,
)

__all__ = [
    "CUDAGRAPH_ARTIFACTS",
    "FUSION_IR_ARTIFACTS",
    "OLDEST_TORCH",
    "OwnCompiles",
    "add_autotune_listener",
    "aoti_compile_and_package",
    "compile_isolation",
    "compiled_codes",
    "converted_codes",
    "counters_snapshot",
    "cudagraph_input_copy_bytes",
    "cudagraph_loggers",
    "cudagraph_trees_logger",
    "current_compile_id",
    "dynamo_config_name",
    "dynamo_config_snapshot",
    "dynamo_config_value",
    "evict_backend",
    "evict_compiled",
    "frame_compile_counts",
    "fresh_backend",
    "functorch_config_snapshot",
    "fusion_ir_formatted_once",
    "fusion_ir_logger",
    "graph_break_registry",
    "graph_module_of_trace_call",
    "inductor_config_snapshot",
    "inductor_mode_names",
    "inductor_option_names",
    "interned_strings",
    "is_backend_failure",
    "is_compiled",
    "is_constraint_violation",
    "is_dynamo_error",
    "is_graph_break_error",
    "loaded_output_module",
    "own_compiles",
    "owns_compiles",
    "patched_configs",
    "patched_dynamo_config",
    "profiler_running",
    "register_bytecode_hook",
    "require_supported_torch",
    "torch_release",
    "torch_version",
    "trace_logger",
    "traced_line",
    "triton_cache_dir",
]

# importing the package refuses a torch older than the hooks here were checked on
require_supported_torch()

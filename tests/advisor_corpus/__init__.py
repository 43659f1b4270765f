"""Small programs that each plant one known problem for the advisor (and clean ones).

Every module defines ``EXPECT`` (the kind of the finding that must come first, or None
for a clean program), ``run() -> Exploration``, and marks the planted source line with a
``# PLANTED`` comment where the finding should point at a line.
"""

CASES = (
    "gb_data_branch",
    "gb_print",
    "gb_item",
    "gb_item_branch",
    "gb_tolist_float",
    "gb_nonzero",
    "gb_random",
    "gb_disabled",
    "gb_in_loop_module",
    "gb_file_io",
    "gb_explicit",
    "gb_logger",
    "gb_warnings",
    "rc_shape",
    "rc_dtype",
    "rc_python_value",
    "rc_list_value",
    "rc_global",
    "rc_limit",
    "dyn_specialised",
    "cache_miss",
    "cache_bypass",
    "no_kernels",
    "unrolled_trace",
    "clean_pointwise",
    "clean_mlp",
    "clean_dynamic",
    "clean_where",
    "clean_training",
    "clean_train_eval",
)

# cases that compile with Inductor on the CPU (C++ kernel builds): marked slow in the tests
INDUCTOR = frozenset({"cache_miss", "cache_bypass", "no_kernels", "clean_pointwise"})

"""Links between stages, derived once (``derive``): ids, node -> kernel, module stacks
of every graph, the user's source lines, the autotuning choice -> kernel."""

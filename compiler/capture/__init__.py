"""Capture: run the user's code under torch.compile and record every stage as trace
events (``recording``), with ``explore``, ``explore_cell`` (a notebook cell),
``explore_script`` and ``explore_export`` as the entry points, ``failures`` as the one
check of options and wording of failures, and ``progress`` reporting what runs."""

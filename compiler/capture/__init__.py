"""Capture: run the user's code under torch.compile and record every stage as trace
events (``recording``), with ``explore``, ``explore_script`` and ``explore_export`` as
the entry points and ``progress`` reporting what runs."""

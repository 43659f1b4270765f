"""Live recompiles: edited source compiled in a warm worker process (``worker``), the
latest edit winning (``session``)."""

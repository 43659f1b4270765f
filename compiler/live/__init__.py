"""Live recompiles: edited source compiled in a warm worker process (``worker``), the
latest edit winning (``session``); what an edit compiles (``target``: a function, a
module class or instance, a method) and the notebook's state it crosses with (``crossing``)."""

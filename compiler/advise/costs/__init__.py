"""What compiling cost: where a run's compile time went (``time_phases``)."""

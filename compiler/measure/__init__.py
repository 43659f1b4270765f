"""Timing loops and peak-memory probes, CPU and GPU: the one loop that times calls, per-kernel
device time under the profiler, the device's copy and matmul peaks, eager against compiled per
call, and the peak memory of one call."""

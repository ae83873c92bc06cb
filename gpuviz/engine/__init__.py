"""Runner, profiling, CUDA-event timing, memory sampling and executors (torch, never Qt)."""

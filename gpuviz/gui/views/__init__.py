"""The views of one open trace: Timeline (adapter), Splits, Memory, Kernels and Summary."""

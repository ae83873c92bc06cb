"""The built-in workloads and their torch-free parameter declarations."""

"""User workload files that the engine tests write into tmp folders."""

OK = '''
import time

def sleepy(device, n: int = 4, sleep_s: float = 0.0):
    """Sleeps a little each step."""
    import torch
    time.sleep(sleep_s)
    return (torch.arange(n, device=device) ** 2).sum()
'''

# Fails on its call number `fail_at` (1: the warm-up, 2: the profiled step, 3+: timed steps).
FAILING = """
CALLS = [0]

def fails(device, fail_at: int = 3, oom: bool = False):
    import torch
    CALLS[0] += 1
    x = torch.ones(1000, device=device)
    if CALLS[0] >= fail_at:
        if oom:
            torch.empty(1 << 50, dtype=torch.uint8, device=device)  # a petabyte: out of memory
        raise ValueError(f"boom on call {CALLS[0]}")
    return x.sum()
"""

# Kills its own process on call number `die_at`.
DYING = """
import os, signal
CALLS = [0]

def dies(device, die_at: int = 3):
    CALLS[0] += 1
    print("a workload print on stdout must not break the event pipe")
    if CALLS[0] >= die_at:
        os.kill(os.getpid(), signal.SIGKILL)
"""

# Raises KeyboardInterrupt inside a step, as Ctrl-C does.
INTERRUPTED = """
CALLS = [0]

def interrupted(device, at: int = 3):
    CALLS[0] += 1
    if CALLS[0] >= at:
        raise KeyboardInterrupt
"""

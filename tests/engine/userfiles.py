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

# Calls sys.exit (or raises SystemExit with another code) on its call number `exit_at`
# (1: the warm-up, 2: the profiled step, 3+: timed steps).
EXITING = """
import sys
CALLS = [0]

def exits(device, exit_at: int = 3, code: int = 5, message: str = ""):
    CALLS[0] += 1
    if CALLS[0] >= exit_at:
        sys.exit(message or code)
"""

# Exits as the file is loaded.
EXITS_ON_LOAD = """
import sys
sys.exit(3)

def f(device):
    pass
"""

# Sends Ctrl-C to its own process from a finalizer that a garbage collection runs: where
# Python drops a KeyboardInterrupt ("Exception ignored in"). Each step leaves a cycle behind.
SIGINT_IN_A_FINALIZER = """
import os, signal, time
SENT = [False]

class Cycle:
    def __init__(self):
        self.me = self

    def __del__(self):
        if not SENT[0]:
            SENT[0] = True
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.2)  # the handler runs here, inside the finalizer

def cyclic(device, sleep_s: float = 0.05):
    Cycle()
    time.sleep(sleep_s)
"""

# Marks the start of its call number `long_at` in the file `marker`, then sleeps 30 s in it.
LONG_STEP = """
import time
CALLS = [0]

def long_step(device, marker: str = "", long_at: int = 4):
    CALLS[0] += 1
    if CALLS[0] == long_at:
        open(marker, "w").close()
        time.sleep(30)
"""

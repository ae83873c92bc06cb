"""``gpuviz workloads [--json]``: list workloads and their parameters (no torch is imported)."""

from __future__ import annotations

import argparse

from gpuviz.display import echo, json_text


def main(args: argparse.Namespace) -> int:
    """Print every workload (built-ins, then plugins) with its parameters."""
    from gpuviz.workloads.registry import all_workloads

    specs = all_workloads()
    if args.json:
        echo(json_text({"workloads": [s.to_json() for s in specs.values()]}, indent=1))
        return 0
    for spec in specs.values():
        flags = [
            f
            for f, on in (("multi-GPU", spec.multi_gpu), ("multi-process", spec.multi_process))
            if on
        ]
        echo(f"{spec.name}: {spec.title}" + (f"  [{', '.join(flags)}]" if flags else ""))
        for p in spec.params:
            default = ",".join(map(str, p.default)) if isinstance(p.default, list) else p.default
            echo(f"  -p {p.name}={default}  ({p.allowed()})  {p.help}")
    echo("\nOr a function in your own file: gpuviz run FILE.py:FUNC -p name=value")
    return 0

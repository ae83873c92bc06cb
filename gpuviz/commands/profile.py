"""``gpuviz profile [OPTIONS] SCRIPT.py|-m MODULE [ARGS...]``: profile a user's script, unmodified.

The script runs in this process, as ``python SCRIPT.py ARGS`` would run it; see
:mod:`gpuviz.engine.script.session` for what is recorded and when. Under torchrun (``RANK`` and
``WORLD_SIZE`` set) each rank writes ``OUT/rank-<RANK>.json.gz``; ``--nproc-per-node N`` starts
``torch.distributed.run`` itself (:mod:`gpuviz.engine.script.launch`).

Exit status: the script's own (``sys.exit(n)`` gives n, an uncaught exception 1, Ctrl-C 130);
2 for bad usage before the script starts (a missing script or module, a bad option, an
``--out`` or ``--events`` place that cannot be written), with one line on stderr. The script's stdout and stderr are untouched; gpuviz's lines go to stderr,
prefixed ``gpuviz:``. ``--json`` prints the result object as the last line of stdout.
"""

from __future__ import annotations

import argparse

from gpuviz.errors import BadInputError


def options_from_args(args: argparse.Namespace) -> object:
    """The :class:`~gpuviz.engine.script.options.ProfileOptions` of the parsed flags."""
    from gpuviz.engine.script.options import ProfileOptions

    return ProfileOptions(
        script=args.script,
        module=args.module,
        args=list(args.script_args),
        skip=args.skip,
        warmup=args.warmup,
        active=args.active,
        repeat=args.repeat,
        stop=args.stop,
        step_fn=args.step_fn,
        duration_s=args.duration,
        out=args.out,
        events=args.events,
        events_fd=args.events_fd,
        record_shapes=args.record_shapes,
        stack=not args.no_stack,
        stack_no_step=args.stack and not args.no_stack,
        memory=args.memory,
        memory_snapshot=args.memory_snapshot,
        snapshot_entries=args.snapshot_entries,
        compile_info=getattr(args, "compile_info", False),
        json=args.json,
    )


def main(args: argparse.Namespace) -> int:
    """Profile the script; returns its exit status (see the module docstring)."""
    from gpuviz.engine.script.options import ProfileOptions, launcher_rank, plan_output

    options = options_from_args(args)
    assert isinstance(options, ProfileOptions)
    options.check()
    if args.nproc_per_node is not None:
        if args.nproc_per_node < 1:
            raise BadInputError(f"--nproc-per-node {args.nproc_per_node}: must be 1 or more")
        from gpuviz.engine.script.launch import run_torchrun

        return run_torchrun(options, args.nproc_per_node)
    from gpuviz.engine.script.session import ScriptSession
    from gpuviz.engine.script.target import resolve_target

    rank = launcher_rank()
    target = resolve_target(options.script, options.module, options.args)
    plan = plan_output(options.out, target.stem, rank)
    from gpuviz.engine.writable import check_out_folder

    # Before the script runs: a place that cannot take the trace would be found out only at
    # the end of its first window (exit 2, one line). --events is opened by the session.
    check_out_folder(plan.base, plan.is_folder, "--out" if options.out else "the trace")
    if options.events:
        from gpuviz.engine.script.options import rank_events_path

        options.events = rank_events_path(options.events, rank)
    return ScriptSession(options, target, plan, rank).run()

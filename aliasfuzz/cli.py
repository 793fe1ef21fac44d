"""The ``aliasfuzz`` command line: argparse subcommands, one line per result.

Exit codes: 0 success, 1 a finding that fails the run (see each subcommand), 2 a user's
mistake (bad flag, bad file, unknown pipeline), reported as one line on stderr.
Each subcommand module exposes ``add_parser(subparsers)`` and sets ``func`` to a
``(args) -> int`` callable.
"""

from __future__ import annotations

import argparse
import signal
import sys

from aliasfuzz.errors import InvalidArgument
from aliasfuzz.fuzz.limits import MAX_STATEMENTS, MAX_STATEMENTS_HELP

__all__ = ["main"]


class _Parser(argparse.ArgumentParser):
    """argparse with a one-line error and exit code 2 (argparse prints usage otherwise)."""

    def error(self, message: str):  # noqa: D401
        self.exit(2, f"aliasfuzz: error: {message}\n")


#: the generator's per-family shares ``sample`` takes as ``--NAME-share``
#: (:func:`aliasfuzz.fuzz.strategies.make_config`'s ``NAME_share``), and what each adds
_SHARES = {
    "grad": "requires_grad inputs",
    "advindex": "an advanced-indexing statement",
    "metadata": "a metadata-mutating statement (t_, resize_, set_, requires_grad_, ...)",
    "autograd": "a torch.autograd.grad or no_grad statement",
    "optional": "an Optional[Tensor] input",
}


def _cmd_sample(args) -> int:
    # --seed needs no check here: parse_seed, run's own, takes only an integer >= 0 or today
    if args.n < 0:  # before torch is imported, in the flag's own name
        raise InvalidArgument(f"-n must be an integer >= 0, got {args.n}")
    if not 1 <= args.max_statements <= MAX_STATEMENTS:  # and the generator's bound, as run's
        raise InvalidArgument(f"--max-statements must be in [1, {MAX_STATEMENTS}], "
                              f"got {args.max_statements}")
    # a family's share flag, where given, overrides the generator's default for it; checked
    # likewise (make_config would name the option, after the import)
    shares = {name: v for name in _SHARES if (v := getattr(args, f"{name}_share")) is not None}
    for name, v in shares.items():
        if not 0.0 <= v <= 1.0:  # NaN fails both comparisons
            raise InvalidArgument(f"--{name}-share must be a number in [0, 1], got {v}")
    from aliasfuzz.campaign.options import CampaignOptions
    from aliasfuzz.campaign.sources import is_dynamic
    from aliasfuzz.fuzz.sample import sample_programs

    share = CampaignOptions.dynamic_share  # the campaign's default --dynamic-share
    texts = sample_programs(args.n, seed=args.seed, max_statements=args.max_statements,
                            **{f"{name}_share": v for name, v in shares.items()})
    for i, text in enumerate(texts):
        # a campaign of this seed compiles these with dynamic shapes: say so, since the
        # program text is the same either way
        dyn = "; a campaign compiles it with dynamic=True" if is_dynamic(share, args.seed, i) else ""
        print(f"# --- program {i} (seed {args.seed}{dyn}) ---")
        print(text)
    return 0


def build_parser() -> argparse.ArgumentParser:
    from aliasfuzz.campaign.cli import parse_seed

    parser = _Parser(prog="aliasfuzz", description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest="command", required=True, parser_class=_Parser)
    p = sub.add_parser("sample", help="print N generated programs as Python")
    p.add_argument("-n", type=int, default=3, help="number of programs (default 3)")
    # the same seed forms as run's (fresh user 22 looked at a nightly campaign's programs)
    p.add_argument("--seed", type=parse_seed, default=0,
                   help="generator seed (default 0); 'today' is YYYYMMDD, as for run")
    p.add_argument("--max-statements", type=int, default=8, help=MAX_STATEMENTS_HELP)
    for name, what in _SHARES.items():
        p.add_argument(f"--{name}-share", type=float, metavar="SHARE",
                       help=f"share of programs given {what} (0..1; default: the generator's)")
    p.set_defaults(func=_cmd_sample)
    from aliasfuzz.campaign.cli import add_parsers as _add_campaign_parsers

    _add_campaign_parsers(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    # finding lines must reach a log file or CI as they happen, also before a kill -9
    if hasattr(sys.stdout, "reconfigure"):
        sys.stdout.reconfigure(line_buffering=True)
    parser = build_parser()
    given = sys.argv[1:] if argv is None else argv
    if given and given[0].startswith("-") and given[0] not in ("-h", "--help"):
        # argparse would say "the following arguments are required: command" (fresh user 51's
        # B6: `aliasfuzz --nope` did not name the flag)
        commands = next(a.choices for a in parser._actions
                        if isinstance(a, argparse._SubParsersAction))
        parser.error(f"unrecognized arguments: {given[0]} (a command comes first: "
                     f"{', '.join(commands)})")
    args = parser.parse_args(argv)
    # run may leave SIGTERM/SIGINT ending the process with its code (campaign.cli's
    # _interruptible): put back what this process had once it returns
    handlers = {s: signal.getsignal(s) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        code = int(args.func(args) or 0)
    except InvalidArgument as e:
        print(f"aliasfuzz: error: {e}", file=sys.stderr)
        return 2
    finally:
        if argv is not None:  # called in a process that goes on (a test, a script)
            for s, h in handlers.items():
                signal.signal(s, h)
    if argv is None and args.command == "run":
        # the aliasfuzz command itself: a finished campaign has nothing left for the
        # interpreter's shutdown (torch's modules and atexit hooks), so the process ends
        # with the summary, and a SIGTERM from here on gets the campaign's code, not 143
        from aliasfuzz.campaign.cli import exit_now

        exit_now(code)
    return code


if __name__ == "__main__":
    sys.exit(main())

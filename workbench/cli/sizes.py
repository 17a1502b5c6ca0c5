"""The ``--n`` and ``--floor-draws`` options shared by ``dryrun`` and ``describe``."""

from __future__ import annotations

import argparse


def n_argument(text: str) -> int | tuple[int, int]:
    """argparse type of ``--n``: a count N or a range LOW:HIGH (argparse names ``--n``)."""
    from workbench.dryrun.size import parse_n  # lazily: the CLI starts without the dry run

    try:
        return parse_n(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_size_arguments(p: argparse.ArgumentParser) -> None:
    """Add ``--n`` and ``--floor-draws`` to a subcommand."""
    p.add_argument("--n", type=n_argument, default=None, metavar="N|LOW:HIGH",
                   help="rehearse at the registry's expected size after cleaning: the proxy "
                   "is resampled to N records (without replacement when N is at most the "
                   "proxy's size, with replacement otherwise); with a range both ends are "
                   "reported and the low end counts (default: the spec's schema.expected_n, else "
                   "the proxy's own size)")
    p.add_argument("--floor-draws", type=int, default=None,
                   help="bootstrap draws per feasibility floor (default 5; 0: no floors)")

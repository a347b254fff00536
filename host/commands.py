"""The user's commands: ``/stowage`` in the chat and ``hermes stowage ...`` on the host's command line.

Apart from :mod:`registration` because the command line includes ``stowage
replay``, which drives engines built by :func:`registration.register_plugin`:
the replay needs the engine's registration, never the commands.
"""

from __future__ import annotations

from typing import Any

from .slash_command import register_slash_command


def register_commands(ctx: Any) -> None:
    register_slash_command(ctx)
    register_cli = getattr(ctx, "register_cli_command", None)
    if callable(register_cli):
        # `hermes stowage doctor` etc.: the command on the routes that install no console script (git clone,
        # user-plugin folder)
        register_cli(
            "stowage",
            help="Stowage's command line (status, doctor, summary, blobs, gc, purge, replay; help lists them)",
            setup_fn=_cli_setup,
            handler_fn=_cli_run,
            description="The `stowage` command, run by Hermes's Python: hermes stowage doctor",
        )


def _cli_setup(parser: Any) -> None:
    import argparse

    from ..command.catalog import command_list

    # Hermes builds this parser with RawDescriptionHelpFormatter: the list prints as written
    parser.epilog = command_list("hermes stowage")
    parser.add_argument(
        "stowage_args",
        nargs=argparse.REMAINDER,
        metavar="COMMAND ...",
        help="a stowage command and its options, e.g. doctor, status --json",
    )


def _cli_run(args: Any) -> None:
    import sys

    from ..command import main

    sys.exit(main(list(getattr(args, "stowage_args", None) or [])))

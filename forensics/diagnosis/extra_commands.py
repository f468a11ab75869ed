"""Commands added by later stages (train, batch, watch, corpus)."""
from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    # ``from forensics import batch`` would give the API function of that name.
    from forensics.batch import register as register_batch

    register_batch(cli)

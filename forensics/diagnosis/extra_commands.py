"""Commands added by later stages (train, batch, watch, corpus)."""
from __future__ import annotations

import click


def register(cli: click.Group) -> None:
    return None

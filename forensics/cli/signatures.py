"""``forensics signatures list|test``: inspect and test the rule signatures."""
from __future__ import annotations

import json

import click

import forensics.exitcodes as exitcodes
from forensics.cli.classify import given_set
from forensics.cli.options import signatures_option


@click.group()
def signatures() -> None:
    """Inspect and test the rule signatures."""


@signatures.command("list")
@click.option("--format", "fmt", type=click.Choice(["table", "json"]), default="table", show_default=True)
@signatures_option()
def sig_list(fmt: str, sigdirs: tuple[str, ...]) -> int:
    """List signatures (id, kind, label, title)."""
    from forensics.diagnosis.signatures import load_signatures

    sset = given_set(sigdirs, load_signatures)
    if fmt == "json":
        click.echo(json.dumps([s.to_dict() for s in sset.signatures], indent=2))
        return 0
    w = max((len(s.id) for s in sset.signatures), default=10)
    click.echo(f"{'id':<{w}}  {'kind':<9}  {'root_cause':<26}  title")
    for s in sset.signatures:
        click.echo(f"{s.id:<{w}}  {s.kind:<9}  {s.root_cause:<26}  {s.title}")
    click.echo(f"{len(sset)} signatures (set {sset.digest})")
    return 0


@signatures.command("test")
@signatures_option()
def sig_test(sigdirs: tuple[str, ...]) -> int:
    """Run every signature's own examples; exit 1 when one fails."""
    from forensics.diagnosis.examples import run_examples
    from forensics.diagnosis.signatures import load_signatures

    sset = given_set(sigdirs, load_signatures)
    total, failures = run_examples(sset)
    for f in failures:
        click.echo(f"FAIL {f.signature} ({f.path}): expected {f.expected}: {f.example[:160]!r}")
    click.echo(f"{total - len(failures)}/{total} examples pass over {len(sset)} signatures")
    return exitcodes.FAILURE if failures else exitcodes.OK

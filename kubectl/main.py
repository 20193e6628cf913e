"""Entry point of `mini-kubectl`.

Not built yet: it is the subject of issue 6. Until then the command answers `--help` and
refuses to pretend, so nobody mistakes a placeholder for a working component.
"""

import sys

import typer

app = typer.Typer(add_completion=False, help="mini-kubectl: a kubectl clone built with typer. (not implemented yet: see docs/STATUS.md).")


@app.callback(invoke_without_command=True)
def run() -> None:
    typer.echo("mini-kubectl is not implemented yet (issue 6); see docs/STATUS.md.", err=True)
    sys.exit(1)


def main() -> None:
    app()

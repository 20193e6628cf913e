"""Entry point of `mini-scheduler`.

Not built yet: it is the subject of issue 4. Until then the command answers `--help` and
refuses to pretend, so nobody mistakes a placeholder for a working component.
"""

import sys

import typer

app = typer.Typer(add_completion=False, help="mini-scheduler: binds pods without a node to a node that fits them. (not implemented yet: see docs/STATUS.md).")


@app.callback(invoke_without_command=True)
def run() -> None:
    typer.echo("mini-scheduler is not implemented yet (issue 4); see docs/STATUS.md.", err=True)
    sys.exit(1)


def main() -> None:
    app()

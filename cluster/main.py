"""Entry point of `mini-k8s`.

Not built yet: it is the subject of issue 6. Until then the command answers `--help` and
refuses to pretend, so nobody mistakes a placeholder for a working component.
"""

import sys

import typer

app = typer.Typer(add_completion=False, help="mini-k8s: starts the whole stack locally as separate processes. (not implemented yet: see docs/STATUS.md).")


@app.callback(invoke_without_command=True)
def run() -> None:
    typer.echo("mini-k8s is not implemented yet (issue 6); see docs/STATUS.md.", err=True)
    sys.exit(1)


def main() -> None:
    app()

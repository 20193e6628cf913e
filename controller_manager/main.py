"""Entry point of `mini-controller-manager`.

Not built yet: it is the subject of issue 5. Until then the command answers `--help` and
refuses to pretend, so nobody mistakes a placeholder for a working component.
"""

import sys

import typer

app = typer.Typer(add_completion=False, help="mini-controller-manager: runs the control loops (replication, deployment, node lifecycle, GC...). (not implemented yet: see docs/STATUS.md).")


@app.callback(invoke_without_command=True)
def run() -> None:
    typer.echo("mini-controller-manager is not implemented yet (issue 5); see docs/STATUS.md.", err=True)
    sys.exit(1)


def main() -> None:
    app()

"""mini-kubectl: a kubectl clone built with typer."""

"""`python -m apiserver` runs the same thing as `mini-apiserver`."""

from apiserver.main import main

main()

"""`python -m cluster` is `mini-k8s`."""

from cluster.main import main

main()

"""`python -m kubelet` runs the same thing as the `mini-kubelet` console script."""

from kubelet.main import main

main()

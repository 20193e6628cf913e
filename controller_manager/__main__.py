"""`python -m controller_manager` runs the same thing as `mini-controller-manager`."""

from controller_manager.main import main

main()

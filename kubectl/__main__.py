"""`python -m kubectl` runs mini-kubectl."""

from kubectl.main import main

main()

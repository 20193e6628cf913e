"""mini-scheduler: binds pods without a node to a node that fits them."""

"""The Kubernetes object model: kinds, metadata, selectors, quantities and Status errors.

Pure data and functions with no I/O, so every component (and every test) can share one
definition of what a Pod *is* without dragging in a web server or a storage client.
"""

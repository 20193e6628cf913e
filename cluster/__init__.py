"""mini-k8s: starts the whole stack locally as separate processes."""

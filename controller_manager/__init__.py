"""mini-controller-manager: runs the control loops (replication, deployment, node lifecycle, GC...)."""

"""mini-kubelet: registers nodes, heartbeats, and runs the pods bound to them (fake runtime)."""

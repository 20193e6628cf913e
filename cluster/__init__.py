"""mini-k8s: starts the whole stack locally as separate processes.

`mini-k8s up` is a tiny process supervisor, in the spirit of `kind` or `k3s server`, but with
nothing hidden: every component is an ordinary process started with the flags you could type
yourself (`python -m apiserver --data-dir …`), each one logs to its own file, and the PID files
are plain text. That is the point for a classroom: `kill $(cat .mini-k8s/run/kubelet-node-2.pid)`
*is* the node-failure lab.

    plan.py       which processes, with which flags and ports (pure: no I/O)
    ports.py      is a TCP port free? pick the kubelets' ports
    processes.py  start a component with its log file; stop by PID (SIGTERM, then SIGKILL)
    state.py      the run/ directory: PID files and cluster.json, so `down` can find everything
    readiness.py  wait for /readyz, /healthz and Ready nodes, with a deadline
    main.py       the typer CLI: up, down, status

`cluster` imports only `api` and `client`; it never imports another component - it starts them.
"""

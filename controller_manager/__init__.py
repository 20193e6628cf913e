"""mini-controller-manager: the control loops that make the cluster converge on what users asked for.

Read `controller.py` first: every controller is the same loop (watch → enqueue a key → reconcile
desired against current), and each file in `controllers/` fills in one reconcile function.
"""

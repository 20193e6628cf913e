"""mini-metrics-server: the resource metrics pipeline's aggregator, in the role metrics-server plays.

    kubelet /metrics/resource ──scrape──▶ scraper.py ─▶ decode.py ─▶ storage.py (last two points)
                                                                         │
    kubectl top, HPA ◀── API server aggregation ◀── server.py (metrics.k8s.io/v1beta1) ◀┘

main.py wires it together; objects.py and discovery.py are what it says on the wire.
"""

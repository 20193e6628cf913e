"""The aggregation layer: groups served by other processes, behind this API server's URLs.

Kubernetes lets an extension API server (the metrics-server is the classic one) serve a whole
group/version — `/apis/metrics.k8s.io/v1beta1/...` — while clients keep talking to the one API
server they know, with its authentication, authorization and discovery. The table is the
APIService objects (apiregistration.k8s.io/v1):

    table.py         which APIService serves a group/version; the groups discovery adds
    endpoints.py     an APIService's Service → an address to call (its Endpoints, as
                     kube-apiserver does with --enable-aggregator-routing)
    proxy.py         forward an authorized request there, with who asked in X-Remote-* headers
    availability.py  keep `status.conditions[Available]` true to what the backend answers
    local.py         the Local APIServices of the built-in groups, as kube-apiserver registers them
"""

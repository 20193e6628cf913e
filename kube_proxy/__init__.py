"""mini-kube-proxy: Services and EndpointSlices in, kernel packet rules out (nftables mode).

    servicemodel.py  Service + EndpointSlices -> one ServicePort per port, with the endpoints to use
    ruleset.py       ServicePorts -> the chains, maps and sets of our nftables table (pure text)
    nft.py           the `nft` program: apply a transaction, list, delete
    host.py          what else kube-proxy needs of the host: sysctls and local routes, undone on exit
    proxier.py       the loop: informers -> debounced sync -> only what changed goes to the kernel
    main.py          the command line
"""

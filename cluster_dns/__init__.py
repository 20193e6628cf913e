"""mini-cluster-dns: the cluster's DNS, in the role CoreDNS (its `kubernetes` plugin) plays."""

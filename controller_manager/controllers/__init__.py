"""One module per controller (see controller_manager/registry.py for the names `--controllers` takes).

Workloads, each a level-triggered loop (controller_manager/controller.py):

    replication.py ─┐
    replicaset.py  ─┴─ replica_manager.py   pods for an RC / a ReplicaSet (one implementation)
                       ├ expectations.py            do not act twice on a lagging cache
                       ├ controller_ref_manager.py  adopt orphans, release what no longer matches
                       └ pod_util.py                active / ready / available, who is deleted first
    deployment.py ─── deployment_sync.py       new/old ReplicaSets, scaling, status, cleanup
                      deployment_rolling.py    RollingUpdate and Recreate
                      deployment_util.py       hashes, annotations, maxSurge/maxUnavailable, conditions

The other files are the cluster's housekeeping controllers (node lifecycle, endpoints, namespace,
garbage collector, pod GC, service accounts).
"""

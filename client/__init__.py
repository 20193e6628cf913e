"""What every component uses to talk to the API server - client-go at small scale.

    RESTClient        the verbs (get/list/create/update/patch/delete/watch) over HTTP   rest.py
    TokenBucket       --kube-api-qps / --kube-api-burst                                  ratelimit.py
    Reflector         LIST, then WATCH from its resourceVersion; re-list on 410          reflector.py
    Informer          local cache keyed ns/name + indexes + on_add/on_update/on_delete   informer.py
    WorkQueue         keys to reconcile: dedup, one worker per key, rate-limited retry   workqueue.py
    LeaderElector     one active replica, by holding a coordination.k8s.io Lease         leaderelection.py
    EventRecorder     core/v1 Events with counts, for `kubectl describe`                 events.py
    kubeconfig        where the server is: --kubeconfig, $KUBECONFIG, --master           kubeconfig.py

Only `api` may be imported from here; the API server is reached over HTTP and nothing else.
"""

from client.errors import ConnectionFailed, ConnectionRefused
from client.events import NORMAL, WARNING, EventRecorder
from client.informer import (
    Informer,
    SharedInformerFactory,
    index_by_namespace,
    index_by_node_name,
    index_by_owner_uid,
    index_by_service_name,
    meta_namespace_key,
    split_key,
)
from client.kubeconfig import (
    ClientConfig,
    ConfigError,
    KubeConfig,
    client_config,
    load_kubeconfig,
    new_client,
    write_context,
)
from client.leaderelection import LeaderElector
from client.ratelimit import TokenBucket
from client.reflector import Reflector
from client.rest import RESTClient, resource_path, resource_type
from client.watch import WatchEvent
from client.workqueue import ItemExponentialFailureRateLimiter, ShutDown, WorkQueue

__all__ = [
    "NORMAL",
    "WARNING",
    "ClientConfig",
    "ConfigError",
    "ConnectionFailed",
    "ConnectionRefused",
    "EventRecorder",
    "Informer",
    "ItemExponentialFailureRateLimiter",
    "KubeConfig",
    "LeaderElector",
    "RESTClient",
    "Reflector",
    "SharedInformerFactory",
    "ShutDown",
    "TokenBucket",
    "WatchEvent",
    "WorkQueue",
    "client_config",
    "index_by_namespace",
    "index_by_node_name",
    "index_by_owner_uid",
    "index_by_service_name",
    "load_kubeconfig",
    "meta_namespace_key",
    "new_client",
    "resource_path",
    "resource_type",
    "split_key",
    "write_context",
]

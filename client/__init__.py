"""What every component uses to talk to the API server: REST client, watch, informer, workqueue.

Only `api` may be imported from here; the API server is reached over HTTP and nothing else.
"""

"""OpenAPI v2 and v3 generated from our own models, and the offline docs page.

kubectl learns the shape of every kind from the OpenAPI documents: `kubectl explain` prints them,
`kubectl apply` reads patch strategies from them, `kubectl create --validate` decides from them
whether the server validates fields. The documents are built from the pydantic models in
api/models and the kind registry, never written by hand, so they cannot drift from what the
server accepts.

    names.py        which Kubernetes name each model class is published under
    comments.py     field descriptions, from the comments in api/models
    generic.py      descriptions of apiVersion/kind/metadata/spec/status; IntOrString, Quantity, Time
    facts.py        required fields and x-kubernetes-* list markers (Kubernetes' facts, as data)
    definitions.py  model -> schema definitions
    paths.py        the REST operations of each resource
    documents.py    the v3 documents per group/version, the v2 document, cached, hashed
    swagger2.py     v3 -> Swagger 2.0
    routes.py       /openapi/v2, /openapi/v3, /docs
    docs_page.py    the docs page (Swagger UI from the swagger-ui-bundle package)
"""

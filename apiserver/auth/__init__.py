"""Who is asking, and may they? Authentication, authorization and audit, as kube-apiserver does them.

Every request passes, in order (front.py):

1. authentication (authenticate.py): an x509 client certificate on the secure port, a bearer
   token (the static token file, a ServiceAccount JWT), or none at all — `system:anonymous` —
   gives a user: a name, a uid and groups. Bad credentials are a 401, never a fall-back to
   anonymous. Requests on the plain `--port` come from `system:unsecured` in `system:masters`,
   as they did on kube-apiserver's old insecure port.
2. impersonation (impersonation.py): `Impersonate-User`/`-Group` headers make the request act as
   someone else, if the real user may `impersonate` them.
3. authorization (authorize.py): the request's attributes (requestinfo.py: verb, resource,
   namespace, name, or a plain path) against `--authorization-mode`: AlwaysAllow, or RBAC
   (rbac.py) over Roles and bindings; a denial is a 403 in Kubernetes' words.
4. audit (audit.py): one line per request to `--audit-log-path`: who did what, and the answer.

The user rides along with the request (context.py), so admission (the RBAC escalation check) and
the review APIs (reviews.py: whoami, can-i) know who is asking.
"""

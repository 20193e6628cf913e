"""`--token-auth-file`: static bearer tokens, kube-apiserver's simplest authenticator.

The file is CSV, one token per line: `token,user,uid,"group1,group2"` (groups optional). It is
read once at start, as Kubernetes does; a malformed file stops the server with the line at fault.

The tokens are kept by their SHA-256 digest, and a presented token is looked up by its digest:
one hash and one dict lookup per request however many users a class's file lists (every
ServiceAccount token is tried here first, too). Comparing against each token in turn cost two
encodes and a compare per listed user per request. The lookup's timing depends only on a digest
of what was presented, which tells an attacker nothing about how close a guess was — the reason
a secret must not be found with a plain `==`.
"""

from __future__ import annotations

import csv
import hashlib

from apiserver.auth.user import AUTHENTICATED, UserInfo


class TokenFileError(ValueError):
    pass


TokenTable = dict[bytes, UserInfo]  # SHA-256 digest of a token → its user


def _digest(token: str) -> bytes:
    return hashlib.sha256(token.encode()).digest()


def load_token_file(path: str) -> TokenTable:
    tokens: TokenTable = {}
    with open(path, newline="") as f:
        for number, row in enumerate(csv.reader(f), start=1):
            if not row or (len(row) == 1 and not row[0].strip()):
                continue
            if len(row) < 3:
                raise TokenFileError(f"{path}:{number}: want token,user,uid[,\"groups\"], got {len(row)} fields")
            token, name, uid = (c.strip() for c in row[:3])
            if not token or not name:
                raise TokenFileError(f"{path}:{number}: empty token or user name")
            groups = tuple(g.strip() for g in row[3].split(",") if g.strip()) if len(row) > 3 else ()
            tokens[_digest(token)] = UserInfo(name, uid, (*groups, AUTHENTICATED))
    return tokens


def lookup(tokens: TokenTable, presented: str) -> UserInfo | None:
    return tokens.get(_digest(presented)) if tokens else None

"""`--token-auth-file`: static bearer tokens, kube-apiserver's simplest authenticator.

The file is CSV, one token per line: `token,user,uid,"group1,group2"` (groups optional). It is
read once at start, as Kubernetes does; a malformed file stops the server with the line at fault.
"""

from __future__ import annotations

import csv
import hmac

from apiserver.auth.user import AUTHENTICATED, UserInfo


class TokenFileError(ValueError):
    pass


def load_token_file(path: str) -> dict[str, UserInfo]:
    tokens: dict[str, UserInfo] = {}
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
            tokens[token] = UserInfo(name, uid, (*groups, AUTHENTICATED))
    return tokens


def lookup(tokens: dict[str, UserInfo], presented: str) -> UserInfo | None:
    for token, user in tokens.items():
        if hmac.compare_digest(token.encode(), presented.encode()):
            return user
    return None

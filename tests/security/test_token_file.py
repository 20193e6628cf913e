"""`--token-auth-file`: each listed token is its user, anything else is nobody (apiserver/auth/tokenfile.py).

The table is keyed by the tokens' digests, so these check what a wrong key would break: a
token close to a listed one (a prefix, an extension, another case) must not match, and the
user, uid and groups of each line must come back with the right token.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from apiserver.auth.tokenfile import TokenFileError, load_token_file, lookup
from apiserver.auth.user import AUTHENTICATED


def test_each_token_is_its_own_user_with_uid_and_groups(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text('alice-token-1,alice,1001,"dev,qa"\nbob-token-22,bob,1002\n\n' + "".join(
        f"student-{i:02d}-token,student-{i:02d},{2000 + i}\n" for i in range(30)))  # fmt: skip
    tokens = load_token_file(str(path))
    alice, bob = lookup(tokens, "alice-token-1"), lookup(tokens, "bob-token-22")
    assert alice is not None
    assert (alice.name, alice.uid, alice.groups) == ("alice", "1001", ("dev", "qa", AUTHENTICATED))
    assert bob is not None and (bob.name, bob.uid, bob.groups) == ("bob", "1002", (AUTHENTICATED,))
    for i in range(30):
        student = lookup(tokens, f"student-{i:02d}-token")
        assert student is not None and student.name == f"student-{i:02d}"


NEAR_MISSES = ["alice-token-", "alice-token-11", "ALICE-TOKEN-1", " alice-token-1", "", "alice"]


@pytest.mark.parametrize("presented", NEAR_MISSES)
def test_a_token_that_is_not_listed_is_nobody(tmp_path: Path, presented: str) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("alice-token-1,alice,1001\n")
    assert lookup(load_token_file(str(path)), presented) is None


def test_a_malformed_line_stops_the_server_naming_the_line(tmp_path: Path) -> None:
    path = tmp_path / "tokens.csv"
    path.write_text("alice-token-1,alice,1001\nonly-a-token,bob\n")
    with pytest.raises(TokenFileError, match=r"tokens.csv:2: want token,user,uid"):
        load_token_file(str(path))

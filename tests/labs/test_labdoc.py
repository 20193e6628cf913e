"""The lab format itself: parsing, output matching, and the one-shell runner (no cluster needed).

If the matcher were too lenient every lab would pass whatever the cluster printed, so the
mismatches matter as much as the matches here.
"""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.labs import labdoc
from tests.labs.labdoc import LabFormatError, output_matches, parse_lab, run_lab

# ---------------------------------------------------------------- matching


def test_placeholders_match_what_varies() -> None:
    expected = [
        "NAME                    READY   STATUS    RESTARTS   AGE",
        "nginx-server-<random>   2/2     Running   0          <age>",
    ]
    assert output_matches(expected, "NAME   READY STATUS RESTARTS AGE\nnginx-server-4s7vw   2/2   Running   0   2m3s\n")
    assert not output_matches(expected, "NAME READY STATUS RESTARTS AGE\nnginx-server-4s7vw 2/2 Pending 0 2m3s\n")
    assert not output_matches(expected, "NAME READY STATUS RESTARTS AGE\nnginx-server-4s7vw 2/2 Running 0 soon\n")


@pytest.mark.parametrize(
    ("placeholder", "good", "bad"),
    [
        ("<age>", "5d", "5 days"),
        ("<ip>", "10.244.1.3", "10.244.1"),
        ("<node>", "node-12", "worker-1"),
        ("<number>", "4521", "45a"),
        ("<time>", "2024-05-01T10:00:00Z", "yesterday"),
        ("<uid>", "0d1cb2d7-fc60-11e8-a361-0242ac110074", "not-a-uid"),
    ],
)
def test_each_placeholder_accepts_its_kind_only(placeholder: str, good: str, bad: str) -> None:
    assert output_matches([f"x {placeholder} y"], f"x {good} y")
    assert not output_matches([f"x {placeholder} y"], f"x {bad} y")


def test_kubectls_own_angle_brackets_are_literal() -> None:
    assert output_matches(["Annotations:  <none>"], "Annotations:  <none>")
    assert not output_matches(["Annotations:  <none>"], "Annotations:  app=x")


def test_ellipsis_line_matches_any_number_of_lines_and_inline_any_text() -> None:
    expected = ["Name: x", "...", "Events:", '{"type":"ADDED",...}']
    assert output_matches(expected, 'Name: x\nEvents:\n{"type":"ADDED","object":{}}\n')
    assert output_matches(expected, 'Name: x\na\nb\nc\nEvents:\n{"type":"ADDED","object":{}}\n')
    assert not output_matches(expected, 'Name: x\nEvents:\n{"type":"DELETED","object":{}}\n')


def test_missing_and_extra_lines_do_not_match() -> None:
    expected = ["a", "b"]
    assert output_matches(expected, "a\n\nb\n")  # blank lines do not count
    assert not output_matches(expected, "a\n")
    assert not output_matches(expected, "a\nb\nc\n")
    assert not output_matches(expected, "b\na\n")


# ---------------------------------------------------------------- parsing

LAB = """# Lab

## Steps

```yaml
$ not a command: only console blocks run
```

```console
$ echo hello
hello
$ true  # eventually
$ false  # exit 1
$ sleep 1  # eventually 90s, exit 0
$ echo '# eventually is not a marker inside quotes'
$ echo a \\
  b
a b
$ cat <<EOF | wc -l
$ not a command but here-document text
EOF
1
```

## Clean-up

```console
$ echo bye
bye
```
"""


def test_parse_commands_outputs_markers_and_cleanup() -> None:
    lab = parse_lab(LAB)
    commands = [s.command for s in lab.steps]
    assert commands == [
        "echo hello",
        "true  # eventually",
        "false  # exit 1",
        "sleep 1  # eventually 90s, exit 0",
        "echo '# eventually is not a marker inside quotes'",
        "echo a \\\n  b",
        "cat <<EOF | wc -l\n$ not a command but here-document text\nEOF",
        "echo bye",
    ]
    hello, true, false, sleep, quoted, continued, heredoc, bye = lab.steps
    assert hello.expected == ["hello"] and hello.eventually is None and hello.exit_code == 0
    assert true.expected is None and true.eventually == labdoc.DEFAULT_EVENTUALLY
    assert false.exit_code == 1
    assert sleep.eventually == 90.0 and sleep.exit_code == 0
    assert quoted.eventually is None
    assert continued.expected == ["a b"]
    assert heredoc.expected == ["1"]
    assert [s.cleanup for s in lab.steps] == [False] * 7 + [True]
    assert hello.line == 10


def test_a_console_block_must_start_with_a_command() -> None:
    with pytest.raises(LabFormatError):
        parse_lab("```console\nsome output\n$ echo\n```\n")


def test_an_unclosed_block_is_an_error() -> None:
    with pytest.raises(LabFormatError):
        parse_lab("```console\n$ echo\n")


# ---------------------------------------------------------------- running


def _run(tmp_path: Path, text: str) -> labdoc.LabRun:
    return run_lab(parse_lab(text), cwd=tmp_path, env=dict(os.environ))


def test_one_shell_variables_and_background_jobs_carry_over(tmp_path: Path) -> None:
    run = _run(
        tmp_path,
        "```console\n$ NAME=world\n$ (sleep 0.5; echo hello $NAME) > out.txt &\n"
        "$ cat out.txt  # eventually 10s\nhello world\n$ kill %1 2>/dev/null; true\n```\n",
    )
    assert run.ok, run.describe()
    assert run.outcomes[2].attempts > 1  # the file was empty at first: it really retried


def test_wrong_output_and_wrong_exit_status_fail(tmp_path: Path) -> None:
    run = _run(tmp_path, "```console\n$ echo hello\ngoodbye\n```\n")
    assert not run.ok and "output does not match" in run.describe()
    run = _run(tmp_path, "```console\n$ ls /nonexistent\n```\n")
    assert not run.ok and "exit status 2, wanted 0" in run.describe()


def test_eventually_gives_up_at_its_deadline(tmp_path: Path) -> None:
    started = time.monotonic()
    run = _run(tmp_path, "```console\n$ echo no  # eventually 2s\nyes\n```\n")
    assert not run.ok
    assert 2 <= time.monotonic() - started < 10


def test_a_hung_command_times_out_and_clean_up_still_runs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(labdoc, "DEFAULT_STEP_TIMEOUT", 1.0)
    run = _run(tmp_path, "```console\n$ sleep 30\n$ echo never\n```\n## Clean-up\n```console\n$ echo bye\nbye\n```\n")
    assert not run.ok
    assert "did not finish" in run.describe()
    assert [o.step.command for o in run.outcomes] == ["sleep 30", "echo bye"]
    assert run.outcomes[-1].ok

"""Labs as executable documents: read a lab's Markdown, run its commands, compare the output.

A classroom lab rots the moment a command's output changes and nobody re-reads the page. So the
labs in docs/labs/ are written in a format a machine can check, and `tests/labs/test_labs.py`
(with `test_real_pod_labs.py`) runs every one of them against a real cluster. The format (explained for humans in
docs/labs/README.md):

- Only fenced blocks whose info string is `console` are run; `yaml`, `text`, … are illustration.
- In a console block a line starting with `$ ` is a command (a trailing `\\` continues it on the
  next line, and a `<<EOF` here-document runs up to its `EOF` line). The lines after it, up to the
  next `$ `, are the expected output (stdout and stderr together). No lines: output not checked.
- The expected output may use placeholders for what varies from run to run (see PLACEHOLDERS),
  `...` inside a line for "any text", and a line that is only `...` for "any number of lines".
  Runs of spaces match runs of spaces (table columns move when AGE grows); blank lines are ignored.
- A trailing shell comment on the command carries markers, so the command stays copy-pasteable:
  `# eventually` (re-run it until the output matches, up to 60 s; `# eventually 90s` for
  longer) and `# exit 1` (the command must fail with that status; default 0).
- Every step runs in ONE bash session per lab, as a student types them into one terminal:
  variables, `cd` and background jobs (`cmd > file &`) carry over from step to step.
- Steps after a heading that says "Clean-up" are the clean-up: they run even when a step
  before them failed, so one broken lab does not leave pods behind for the next.

This module is plain Python with no pytest in it, so a teacher can also check a lab against
their own cluster: `python -m tests.labs.labdoc docs/labs/01-control-loop-rc-self-healing.md`.
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

# What varies between runs, and what each placeholder accepts. Anything else in angle brackets is
# literal text: kubectl itself prints `<none>`, `<unset>` and `<invalid>`.
PLACEHOLDERS: dict[str, str] = {
    "<age>": r"(?:\d+[smhdy])+|<invalid>|<unknown>",  # kubectl's AGE column: 9s, 2m3s, 5d
    "<random>": r"[a-z0-9]+",  # generated name suffixes, pod-template-hash
    "<ip>": r"\d{1,3}(?:\.\d{1,3}){3}",
    "<node>": r"node-\d+",
    "<number>": r"\d+",  # resourceVersions, PIDs, ports, counts
    "<time>": r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d)",  # RFC 3339
    "<uid>": r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}",
    "...": r".*?",
}
_TOKEN = re.compile("|".join(re.escape(p) for p in PLACEHOLDERS))
_SPACES = re.compile(r"[ \t]+")
ANY_LINES = "..."

DEFAULT_EVENTUALLY = 60.0  # seconds an `# eventually` step may keep retrying
DEFAULT_STEP_TIMEOUT = 60.0  # a single run of any command
RETRY_INTERVAL = 1.0


@dataclass
class Step:
    command: str  # as bash gets it (continuation lines and here-documents included)
    expected: list[str] | None  # None: output not checked
    line: int  # 1-based line of the `$ ` in the Markdown file
    eventually: float | None = None  # seconds to keep retrying, None: run once
    exit_code: int = 0
    cleanup: bool = False

    @property
    def program(self) -> str:
        return self.command.split(maxsplit=1)[0] if self.command.strip() else ""


@dataclass
class Lab:
    path: str
    steps: list[Step] = field(default_factory=list)

    @property
    def main(self) -> list[Step]:
        return [s for s in self.steps if not s.cleanup]

    @property
    def cleanup(self) -> list[Step]:
        return [s for s in self.steps if s.cleanup]


class LabFormatError(ValueError):
    pass


# ---------------------------------------------------------------- parsing

_MARK_EVENTUALLY = re.compile(r"\beventually(?:\s+(\d+(?:\.\d+)?)s)?\b")
_MARK_EXIT = re.compile(r"\bexit\s+(\d+)\b")
_HEREDOC = re.compile(r"<<-?\s*(['\"]?)(\w+)\1")
_CLEANUP_HEADING = re.compile(r"^#{1,6}\s.*\bclean[- ]?up\b", re.IGNORECASE)


def trailing_comment(line: str) -> str | None:
    """The text of a shell comment at the end of `line` (a `#` after whitespace, outside quotes)."""
    quote = ""
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[i + 1 :].strip()
    return None


def parse_markers(command_lines: list[str]) -> tuple[float | None, int]:
    eventually: float | None = None
    exit_code = 0
    for line in command_lines:
        comment = trailing_comment(line)
        if comment is None:
            continue
        if m := _MARK_EVENTUALLY.search(comment):
            eventually = float(m.group(1)) if m.group(1) else DEFAULT_EVENTUALLY
        if m := _MARK_EXIT.search(comment):
            exit_code = int(m.group(1))
    return eventually, exit_code


def parse_lab(text: str, path: str = "<lab>") -> Lab:
    lab = Lab(path)
    lines = text.splitlines()
    cleanup = False
    i = 0
    while i < len(lines):
        line = lines[i]
        if _CLEANUP_HEADING.match(line):
            cleanup = True
        fence = line.strip()
        if fence.startswith("```"):
            info = fence[3:].strip()
            end = i + 1
            while end < len(lines) and not lines[end].strip().startswith("```"):
                end += 1
            if end == len(lines):
                raise LabFormatError(f"{path}:{i + 1}: code block is never closed")
            if info == "console":
                lab.steps.extend(_parse_console(lines[i + 1 : end], i + 2, path, cleanup))
            i = end + 1
            continue
        i += 1
    return lab


def _parse_console(block: list[str], first_line: int, path: str, cleanup: bool) -> list[Step]:
    steps: list[Step] = []
    i = 0
    while i < len(block):
        line = block[i]
        if not line.startswith("$ "):
            if line.strip():
                raise LabFormatError(f"{path}:{first_line + i}: console block must start with a `$ ` command")
            i += 1
            continue
        start = i
        command_lines = [line[2:]]  # the lines markers may sit on (not here-document bodies)
        text = [line[2:]]
        while text[-1].endswith("\\") and i + 1 < len(block):
            i += 1
            command_lines.append(block[i])
            text.append(block[i])
        for m in _HEREDOC.finditer("\n".join(command_lines)):
            word = m.group(2)
            while True:
                i += 1
                if i >= len(block):
                    raise LabFormatError(f"{path}:{first_line + start}: here-document {word} not closed")
                text.append(block[i])
                if block[i].strip() == word:
                    break
        i += 1
        expected: list[str] = []
        while i < len(block) and not block[i].startswith("$ "):
            expected.append(block[i])
            i += 1
        eventually, exit_code = parse_markers(command_lines)
        steps.append(
            Step(
                command="\n".join(text),
                expected=expected if any(e.strip() for e in expected) else None,
                line=first_line + start,
                eventually=eventually,
                exit_code=exit_code,
                cleanup=cleanup,
            )
        )
    return steps


# ---------------------------------------------------------------- matching


def line_pattern(expected: str) -> re.Pattern[str]:
    """One expected line as a regex: placeholders become their patterns, spaces stretch."""
    parts: list[str] = []
    pos = 0
    text = expected.strip()
    for m in _TOKEN.finditer(text):
        parts.append(_literal(text[pos : m.start()]))
        parts.append(f"(?:{PLACEHOLDERS[m.group(0)]})")
        pos = m.end()
    parts.append(_literal(text[pos:]))
    return re.compile("".join(parts))


def _literal(text: str) -> str:
    return r"[ \t]+".join(re.escape(chunk) for chunk in _SPACES.split(text))


def _significant(lines: list[str]) -> list[str]:
    return [ln.rstrip() for ln in lines if ln.strip()]


def output_matches(expected: list[str], actual: str) -> bool:
    """Do the actual lines match the expected ones, in order, with `...` lines as "any lines"?"""
    want = _significant(expected)
    got = [ln.strip() for ln in _significant(actual.splitlines())]
    patterns = [None if w.strip() == ANY_LINES else line_pattern(w) for w in want]
    memo: dict[tuple[int, int], bool] = {}

    def match(i: int, j: int) -> bool:
        key = (i, j)
        if key not in memo:
            if i == len(patterns):
                memo[key] = j == len(got)
            elif patterns[i] is None:
                memo[key] = match(i + 1, j) or (j < len(got) and match(i, j + 1))
            else:
                pat = patterns[i]
                assert pat is not None
                memo[key] = j < len(got) and pat.fullmatch(got[j]) is not None and match(i + 1, j + 1)
        return memo[key]

    return match(0, 0)


# ---------------------------------------------------------------- running


@dataclass
class Outcome:
    step: Step
    ok: bool
    exit_code: int | None  # None: timed out
    output: str
    attempts: int
    seconds: float
    skipped: str = ""

    def describe(self) -> str:
        s = self.step
        head = f"line {s.line}: $ {s.command.splitlines()[0]}"
        if self.skipped:
            return f"{head}\n  skipped: {self.skipped}"
        if self.exit_code is None:
            why = f"did not finish within {DEFAULT_STEP_TIMEOUT:g}s"
        elif self.exit_code != s.exit_code:
            why = f"exit status {self.exit_code}, wanted {s.exit_code}"
        else:
            why = "output does not match"
        tries = f" after {self.attempts} attempts in {self.seconds:.0f}s" if s.eventually else ""
        want = "\n".join(f"    {e}" for e in (s.expected or ["(not checked)"]))
        got = "\n".join(f"    {g}" for g in self.output.rstrip().splitlines()) or "    (nothing)"
        return f"{head}\n  {why}{tries}\n  expected:\n{want}\n  got:\n{got}"


class ShellSession:
    """One long-lived `bash`, fed one step at a time: what a student's terminal is.

    Each step's output goes to its own file (a background job started in a step keeps writing to
    that step's file, never to a pipe that would block), and its exit status to another file that
    appears only when the step is done — which is what we wait for, with a deadline.
    """

    def __init__(self, cwd: Path, env: dict[str, str]) -> None:
        self.scratch = Path(tempfile.mkdtemp(prefix="mini-k8s-lab-"))
        self.count = 0
        self.proc = subprocess.Popen(
            ["bash", "--noprofile", "--norc"],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=str(cwd),
            env=env,
            text=True,
            start_new_session=True,  # its own process group: close() stops every background job
        )

    def run(self, command: str, timeout: float) -> tuple[int | None, str]:
        self.count += 1
        out = self.scratch / f"{self.count}.out"
        status = self.scratch / f"{self.count}.rc"
        script = f"{{\n{command}\n}} >'{out}' 2>&1 </dev/null\necho $? >'{status}.tmp'; mv '{status}.tmp' '{status}'\n"
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(script)
            self.proc.stdin.flush()
        except BrokenPipeError:
            return None, "(the shell has exited)"
        deadline = time.monotonic() + timeout
        while not status.exists():
            if time.monotonic() > deadline or self.proc.poll() is not None:
                return None, _read(out)
            time.sleep(0.05)  # polling interval of a wait with a deadline
        return int(status.read_text().strip() or "-1"), _read(out)

    def close(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=5)
        shutil.rmtree(self.scratch, ignore_errors=True)


def _read(path: Path) -> str:
    try:
        return path.read_text(errors="replace")
    except FileNotFoundError:
        return ""


def run_step(shell: ShellSession, step: Step) -> Outcome:
    if step.program == "kubectl" and shutil.which("kubectl") is None:
        return Outcome(step, True, None, "", 0, 0.0, skipped="the real kubectl is not installed")
    started = time.monotonic()
    deadline = started + (step.eventually or 0.0)
    attempts = 0
    while True:
        attempts += 1
        budget = DEFAULT_STEP_TIMEOUT if not step.eventually else max(5.0, deadline - time.monotonic())
        code, output = shell.run(step.command, min(budget, DEFAULT_STEP_TIMEOUT))
        ok = (
            code is not None
            and code == step.exit_code
            and (step.expected is None or output_matches(step.expected, output))
        )
        if ok or code is None or not step.eventually or time.monotonic() >= deadline:
            return Outcome(step, ok, code, output, attempts, time.monotonic() - started)
        # `# eventually`: the lab says this converges; poll until it has, one last time at the deadline
        time.sleep(min(RETRY_INTERVAL, max(0.0, deadline - time.monotonic())))


@dataclass
class LabRun:
    lab: Lab
    outcomes: list[Outcome] = field(default_factory=list)

    @property
    def failures(self) -> list[Outcome]:
        return [o for o in self.outcomes if not o.ok]

    @property
    def ok(self) -> bool:
        return not self.failures and len(self.outcomes) == len(self.lab.steps)

    def describe(self) -> str:
        lines = [f"{self.lab.path}: {len(self.outcomes)}/{len(self.lab.steps)} steps run"]
        lines += [o.describe() for o in self.failures]
        return "\n".join(lines)


def run_lab(lab: Lab, *, cwd: Path, env: dict[str, str], on_step: Callable[[Outcome], None] | None = None) -> LabRun:
    """Run the steps in order in one shell; stop at the first failure, then always run the clean-up."""
    result = LabRun(lab)
    shell = ShellSession(cwd, env)
    try:
        for step in lab.main:
            outcome = run_step(shell, step)
            result.outcomes.append(outcome)
            if on_step:
                on_step(outcome)
            if not outcome.ok:
                break
        if shell.proc.poll() is not None or (result.outcomes and result.outcomes[-1].exit_code is None):
            shell.close()  # a hung step holds the shell: clean up from a fresh one
            shell = ShellSession(cwd, env)
        for step in lab.cleanup:
            outcome = run_step(shell, step)
            result.outcomes.append(outcome)
            if on_step:
                on_step(outcome)
    finally:
        shell.close()
    return result


def main(argv: list[str] | None = None) -> int:
    """Check labs against the cluster your KUBECONFIG points at (run from the repository root)."""
    paths = (argv if argv is not None else sys.argv[1:]) or sorted(
        str(p) for p in Path("docs/labs").glob("[0-9][0-9]-*.md")
    )
    failed = 0
    for p in paths:
        lab = parse_lab(Path(p).read_text(), p)
        print(f"== {p} ({len(lab.steps)} steps)")

        def show(o: Outcome) -> None:
            mark = "skip" if o.skipped else ("ok  " if o.ok else "FAIL")
            print(f"  {mark} {o.seconds:5.1f}s  line {o.step.line}: $ {o.step.command.splitlines()[0]}")

        run = run_lab(lab, cwd=Path.cwd(), env=dict(os.environ), on_step=show)
        if not run.ok:
            failed += 1
            print(run.describe())
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Pieces every describer shares: labels, annotations, taints, tolerations, selectors, times,
and the Events table - each printed the way kubectl's describe.go prints it."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kubectl.describe.writer import LEVEL_0, LEVEL_1, PrefixWriter

MAX_ANNOTATION_LEN = 140
SKIP_ANNOTATIONS = {"kubectl.kubernetes.io/last-applied-configuration"}


def parse_time(value: str | None) -> datetime | None:
    if not value:
        return None
    try:
        return datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return None


def rfc1123z(value: str | None) -> str:
    """Go's time.RFC1123Z: `Mon, 02 Jan 2006 15:04:05 -0700` (the zero time when unset)."""
    t = parse_time(value)
    if t is None:
        return "Mon, 01 Jan 0001 00:00:00 +0000"
    return t.strftime("%a, %d %b %Y %H:%M:%S %z")


def human_duration(seconds: float) -> str:
    """k8s.io/apimachinery duration.HumanDuration."""
    s = int(seconds)
    if s < -1:
        return "<invalid>"
    if s < 0:
        return "0s"
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m" if s % 60 == 0 else f"{minutes}m{s % 60}s"
    if minutes < 180:
        return f"{minutes}m"
    hours = s // 3600
    if hours < 8:
        return f"{hours}h" if minutes % 60 == 0 else f"{hours}h{minutes % 60}m"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        return f"{hours // 24}d" if hours % 24 == 0 else f"{hours // 24}d{hours % 24}h"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        dy = (hours // 24) % 365
        return f"{hours // 24 // 365}y" if dy == 0 else f"{hours // 24 // 365}y{dy}d"
    return f"{hours // 24 // 365}y"


def since(value: str | None) -> str:
    t = parse_time(value)
    if t is None:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - t).total_seconds())


def labels_multiline(
    w: PrefixWriter,
    title: str,
    labels: dict[str, str] | None,
    initial: str = "",
    skip: set[str] | frozenset[str] = frozenset(),
) -> None:
    w.write(LEVEL_0, f"{initial}{title}:\t")
    keys = sorted(k for k in (labels or {}) if k not in skip)
    if not keys:
        w.line("<none>")
        return
    for i, key in enumerate(keys):
        if i:
            w.write(LEVEL_0, "\t")  # kubectl writes only the inner indent here
        w.write(LEVEL_0, f"{key}={labels[key]}\n")  # type: ignore[index]


def annotations_multiline(
    w: PrefixWriter,
    title: str,
    annotations: dict[str, str] | None,
    initial: str = "",
    skip: set[str] | frozenset[str] = frozenset(SKIP_ANNOTATIONS),
) -> None:
    w.write(LEVEL_0, f"{initial}{title}:\t")
    keys = sorted(k for k in (annotations or {}) if k not in skip)
    if not keys:
        w.line("<none>")
        return
    indent = "\t"
    for i, key in enumerate(keys):
        if i:
            w.write(LEVEL_0, indent)
        value = annotations[key].removesuffix("\n")  # type: ignore[index]
        if len(value) + len(key) + 2 > MAX_ANNOTATION_LEN or "\n" in value:
            w.write(LEVEL_0, f"{key}:\n")
            for s in value.split("\n"):
                short = s if len(s) <= MAX_ANNOTATION_LEN - 2 else s[: MAX_ANNOTATION_LEN - 2] + "..."
                w.write(LEVEL_0, f"{indent}  {short}\n")
        else:
            w.write(LEVEL_0, f"{key}: {value}\n")


def taint_string(t: dict[str, Any]) -> str:
    key = t.get("key", "")
    if t.get("value"):
        key += f"={t['value']}"
    return f"{key}:{t.get('effect', '')}"


def taints_multiline(
    w: PrefixWriter, title: str, taints: list[dict[str, Any]] | None, initial: str = ""
) -> None:
    w.write(LEVEL_0, f"{initial}{title}:\t")
    if not taints:
        w.line("<none>")
        return
    for i, t in enumerate(sorted(taints, key=lambda t: (t.get("key", ""), t.get("effect", "")))):
        if i:
            w.write(LEVEL_0, f"{initial}\t")
        w.write(LEVEL_0, taint_string(t) + "\n")


def tolerations_multiline(
    w: PrefixWriter, title: str, tolerations: list[dict[str, Any]] | None, initial: str = ""
) -> None:
    w.write(LEVEL_0, f"{initial}{title}:\t")
    if not tolerations:
        w.line("<none>")
        return
    for i, t in enumerate(sorted(tolerations, key=lambda t: t.get("key", ""))):
        if i:
            w.write(LEVEL_0, f"{initial}\t")
        text = t.get("key", "")
        if t.get("value"):
            text += f"={t['value']}"
        if t.get("effect"):
            text += f":{t['effect']}"
        if t.get("operator") == "Exists" and not t.get("value"):
            text += " op=Exists" if (t.get("key") or t.get("effect")) else "op=Exists"
        if t.get("tolerationSeconds") is not None:
            text += f" for {t['tolerationSeconds']}s"
        w.write(LEVEL_0, text + "\n")


def format_labels(labels: dict[str, str] | None) -> str:
    if not labels:
        return "<none>"
    return ",".join(f"{k}={labels[k]}" for k in sorted(labels))


def format_label_selector(sel: dict[str, Any] | None) -> str:
    """metav1.FormatLabelSelector: requirements sorted by key; `<none>` when empty."""
    if not sel:
        return "<none>"
    reqs: list[tuple[str, str]] = [(k, f"{k}={v}") for k, v in (sel.get("matchLabels") or {}).items()]
    for e in sel.get("matchExpressions") or []:
        key, op, values = e.get("key", ""), e.get("operator", ""), sorted(e.get("values") or [])
        text = {
            "In": f"{key} in ({','.join(values)})",
            "NotIn": f"{key} notin ({','.join(values)})",
            "Exists": key,
            "DoesNotExist": f"!{key}",
        }.get(op, key)
        reqs.append((key, text))
    return ",".join(t for _, t in sorted(reqs, key=lambda r: r[0])) or "<none>"


def controller_of(obj: dict[str, Any]) -> str:
    for ref in (obj.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller"):
            return f"{ref.get('kind')}/{ref.get('name')}"
    return ""


def describe_events(w: PrefixWriter, events: list[dict[str, Any]] | None) -> None:
    if events is None:
        return
    if not events:
        w.write(LEVEL_0, "Events:\t<none>\n")
        return
    w.flush()
    events = sorted(events, key=lambda e: e.get("lastTimestamp") or e.get("eventTime") or "")
    w.write(LEVEL_0, "Events:\n  Type\tReason\tAge\tFrom\tMessage\n")
    w.write(LEVEL_1, "----\t------\t----\t----\t-------\n")
    for e in events:
        first = since(e.get("eventTime")) if e.get("eventTime") else since(e.get("firstTimestamp"))
        series = e.get("series")
        count = int(e.get("count") or 0)
        if series:
            interval = f"{since(series.get('lastObservedTime'))} (x{series.get('count')} over {first})"
        elif count > 1:
            interval = f"{since(e.get('lastTimestamp'))} (x{count} over {first})"
        else:
            interval = first
        source = (e.get("source") or {}).get("component") or e.get("reportingComponent") or ""
        w.write(
            LEVEL_1,
            f"{e.get('type', '')}\t{e.get('reason', '')}\t{interval}\t{source}\t"
            f"{str(e.get('message', '')).strip()}\n",
        )

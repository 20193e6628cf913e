"""Label selectors: how Kubernetes says "these objects" without naming them.

A ReplicaSet does not own a list of pod names; it owns a *selector* (`app=nginx`) and
counts whatever pods match it right now. Services, Deployments and `kubectl get -l`
work the same way. So the selector is the glue of the whole control-loop design, and
its semantics must be exact:

- A `Selector` is an AND of `Requirement`s. Each requirement is (key, operator, values).
- Equality-based: `app=nginx` (`==` is the same), `tier!=db`.
- Set-based: `env in (dev,prod)`, `env notin (x)`, `app` (exists), `!app` (does not exist),
  and `replicas>3` / `replicas<3` (`gt`/`lt`, integer values only).
- The negative operators (`!=`, `notin`, `!`) *match objects that lack the key*:
  `tier!=db` selects a pod with no `tier` label at all.

Three ways in, as in Kubernetes: `parse()` reads the string form (what `?labelSelector=`
carries), `from_label_selector()` reads the structured `matchLabels`/`matchExpressions`
of a Deployment, `from_set()` reads the plain map of a ReplicationController.

Empty versus nothing (this trips everyone once):
- the empty selector (`""`, `{}` or an empty map) has no requirements and selects
  *everything*;
- a *missing* structured selector (`None`) selects *nothing*. A Deployment without a
  selector must not adopt every pod in the namespace. `str()` of the nothing-selector is
  `""`, as in Kubernetes, so never send one over the wire: check `.nothing` first.

`str()` gives the canonical form: requirements sorted by key, values of `in`/`notin`
sorted. `parse(str(s)) == s` for every valid selector.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from api.errors import FieldError, aggregate, go_quote, invalid_value

# ---------------------------------------------------------------- key and value rules

_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME_RE = re.compile(f"^{_QUALIFIED_NAME_FMT}$")
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_FMT = f"({_QUALIFIED_NAME_FMT})?"
_LABEL_VALUE_RE = re.compile(f"^{_LABEL_VALUE_FMT}$")
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = f"{_DNS1123_LABEL_FMT}(\\.{_DNS1123_LABEL_FMT})*"
_DNS1123_SUBDOMAIN_RE = re.compile(f"^{_DNS1123_SUBDOMAIN_FMT}$")
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
LABEL_NAME_MAX_LENGTH = 63
LABEL_VALUE_MAX_LENGTH = 63
DNS1123_SUBDOMAIN_MAX_LENGTH = 253


def regex_error(msg: str, fmt: str, *examples: str) -> str:
    """Kubernetes' wording for a failed pattern, examples and regex included."""
    # The double spaces in "'MyName',  or 'my.name'" are Kubernetes' own; keep them.
    shown = "e.g. " + " or ".join(f"'{e}', " for e in examples) if examples else ""
    return f"{msg} ({shown}regex used for validation is '{fmt}')"


def _max_len_error(n: int) -> str:
    return f"must be no more than {n} characters"


def validate_dns1123_subdomain(value: str) -> list[str]:
    """Error strings for a DNS-1123 subdomain (`example.com`); empty when valid."""
    errs = []
    if len(value) > DNS1123_SUBDOMAIN_MAX_LENGTH:
        errs.append(_max_len_error(DNS1123_SUBDOMAIN_MAX_LENGTH))
    if not _DNS1123_SUBDOMAIN_RE.match(value):
        errs.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errs


def validate_label_key(key: str) -> list[str]:
    """Error strings for a label key, a "qualified name" `[prefix/]name`; empty when valid.

    The prefix is a DNS subdomain (`app.kubernetes.io/`), the name at most 63 characters."""
    errs: list[str] = []
    parts = key.split("/")
    if len(parts) > 2:
        return [
            "a qualified name "
            + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
            + " with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"
        ]
    name = parts[-1]
    if len(parts) == 2:
        prefix = parts[0]
        if not prefix:
            errs.append("prefix part must be non-empty")
        else:
            errs.extend("prefix part " + m for m in validate_dns1123_subdomain(prefix))
    if not name:
        errs.append("name part must be non-empty")
    elif len(name) > LABEL_NAME_MAX_LENGTH:
        errs.append("name part " + _max_len_error(LABEL_NAME_MAX_LENGTH))
    if not _QUALIFIED_NAME_RE.match(name):
        errs.append(
            "name part " + regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        )
    return errs


def validate_label_value(value: str) -> list[str]:
    """Error strings for a label value (may be empty, at most 63 characters)."""
    errs = []
    if len(value) > LABEL_VALUE_MAX_LENGTH:
        errs.append(_max_len_error(LABEL_VALUE_MAX_LENGTH))
    if not _LABEL_VALUE_RE.match(value):
        errs.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errs


class SelectorParseError(ValueError):
    """A selector string or structure that Kubernetes would reject (400 on the wire)."""


# ---------------------------------------------------------------- requirements and selectors

EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "=", "==", "!="
IN, NOT_IN, EXISTS, DOES_NOT_EXIST = "in", "notin", "exists", "!"
GREATER_THAN, LESS_THAN = "gt", "lt"
OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN, EXISTS, DOES_NOT_EXIST)
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_INT64 = re.compile(r"^[+-]?[0-9]+$")


def _parse_int64(s: str) -> int | None:
    """Go's strconv.ParseInt(s, 10, 64), or None when it would fail."""
    if not _INT64.match(s):
        return None
    n = int(s)
    return n if -(2**63) <= n < 2**63 else None


@dataclass(frozen=True)
class Requirement:
    """One condition on one label key. Values are kept sorted and unique (they are a set)."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        object.__setattr__(self, "values", tuple(sorted(set(self.values))))
        errors = self._errors()
        if errors:
            raise SelectorParseError(aggregate([str(e) for e in errors]))

    def _errors(self) -> list[FieldError]:
        errs: list[FieldError] = []
        if key_errs := validate_label_key(self.key):
            errs.append(invalid_value("key", self.key, "; ".join(key_errs)))
        op, vals = self.operator, list(self.values)
        if op in (IN, NOT_IN) and not vals:
            errs.append(invalid_value("values", vals, "for 'in', 'notin' operators, values set can't be empty"))
        elif op in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS) and len(vals) != 1:
            errs.append(invalid_value("values", vals, "exact-match compatibility requires one single value"))
        elif op in (EXISTS, DOES_NOT_EXIST) and vals:
            errs.append(invalid_value("values", vals, "values set must be empty for exists and does not exist"))
        elif op in (GREATER_THAN, LESS_THAN):
            if len(vals) != 1:
                errs.append(invalid_value("values", vals, "for 'Gt', 'Lt' operators, exactly one value is required"))
            for i, v in enumerate(vals):
                if _parse_int64(v) is None:
                    errs.append(
                        invalid_value(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
                    )
        elif op not in OPERATORS:
            quoted = ", ".join(go_quote(o) for o in OPERATORS)
            errs.append(FieldError("NotSupported", "operator", op, f"supported values: {quoted}"))
        for i, v in enumerate(vals):
            if value_errs := validate_label_value(v):
                errs.append(invalid_value(f"values[{i}][{self.key}]", v, "; ".join(value_errs)))
        return errs

    def matches(self, labels: Mapping[str, str]) -> bool:
        has = self.key in labels
        if self.operator in (IN, EQUALS, DOUBLE_EQUALS):
            return has and labels[self.key] in self.values
        if self.operator in (NOT_IN, NOT_EQUALS):
            return not has or labels[self.key] not in self.values  # a missing key matches
        if self.operator == EXISTS:
            return has
        if self.operator == DOES_NOT_EXIST:
            return not has
        # gt / lt: the label must exist and be an integer; anything else does not match.
        actual = _parse_int64(labels[self.key]) if has else None
        wanted = _parse_int64(self.values[0])
        if actual is None or wanted is None:
            return False
        return actual > wanted if self.operator == GREATER_THAN else actual < wanted

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({','.join(self.values)})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{self.values[0]}"


def _canonical(reqs: Iterable[Requirement]) -> tuple[Requirement, ...]:
    # Kubernetes sorts by key; the string form breaks ties so that order never matters.
    return tuple(sorted(reqs, key=lambda r: (r.key, str(r))))


@dataclass(frozen=True)
class Selector:
    """An immutable AND of requirements. Build with parse / from_label_selector / from_set."""

    requirements: tuple[Requirement, ...] = ()
    nothing: bool = field(default=False)  # True only for the selector of a missing (None) selector

    def __post_init__(self) -> None:
        object.__setattr__(self, "requirements", _canonical(self.requirements))

    @classmethod
    def everything(cls) -> Selector:
        return cls()

    @classmethod
    def select_nothing(cls) -> Selector:
        return cls(nothing=True)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (selects everything)."""
        return not self.nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self.nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def add(self, *reqs: Requirement) -> Selector:
        """A new selector with more requirements (the nothing-selector stays nothing)."""
        return self if self.nothing else Selector(self.requirements + reqs)

    def requires_exact_match(self, key: str) -> str | None:
        """The one value `key` must have (`key=v`, `key==v` or `key in (v)`), else None.
        Lets a caller use an index instead of scanning everything."""
        for r in self.requirements:
            if r.key == key:
                if r.operator in (EQUALS, DOUBLE_EQUALS, IN) and len(r.values) == 1:
                    return r.values[0]
                return None
        return None

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


# ---------------------------------------------------------------- the three ways in


def from_set(labels: Mapping[str, str] | None) -> Selector:
    """The selector of a plain map (a ReplicationController or Service `selector`):
    every pair must be equal. None and {} select everything, as in Kubernetes."""
    return Selector(tuple(Requirement(k, EQUALS, (v,)) for k, v in (labels or {}).items()))


_EXPRESSION_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def from_label_selector(selector: Mapping[str, object] | None) -> Selector:
    """A metav1.LabelSelector (`matchLabels` + `matchExpressions`) as a Selector.

    None selects nothing; {} (no labels, no expressions) selects everything."""
    if selector is None:
        return Selector.select_nothing()
    match_labels = selector.get("matchLabels") or {}
    expressions = selector.get("matchExpressions") or []
    if not isinstance(match_labels, Mapping) or not isinstance(expressions, list):
        raise SelectorParseError("matchLabels must be a map and matchExpressions a list")
    reqs = [Requirement(str(k), EQUALS, (str(v),)) for k, v in match_labels.items()]
    for expr in expressions:
        if not isinstance(expr, Mapping):
            raise SelectorParseError("each matchExpressions item must be a map")
        op = expr.get("operator")
        if op not in _EXPRESSION_OPERATORS:
            raise SelectorParseError(f"{go_quote(str(op))} is not a valid label selector operator")
        reqs.append(Requirement(str(expr.get("key", "")), _EXPRESSION_OPERATORS[op], tuple(expr.get("values") or ())))
    return Selector(tuple(reqs))


def budget_selector(selector: Mapping[str, object] | None) -> Selector:
    """A PodDisruptionBudget's `spec.selector`: nil, empty or invalid selects *nothing* (unlike a
    Deployment's, where empty selects everything), as Kubernetes' eviction and disruption code
    read it."""
    if not selector:
        return Selector.select_nothing()
    try:
        parsed = from_label_selector(selector)
    except SelectorParseError:
        return Selector.select_nothing()
    return Selector.select_nothing() if parsed.empty else parsed


def parse(text: str) -> Selector:
    """Parse the string form: `app=nginx,tier!=db`, `env in (dev,prod)`, `!canary`, ...

    Grammar (Kubernetes'): requirements separated by commas; a requirement is
    `[!]KEY [ (in|notin) (V,V,...) | (=|==|!=|>|<) V ]`. Whitespace separates tokens
    and is otherwise ignored. `x=` and `x in ()` mean the empty value. The empty
    string selects everything."""
    return Selector(tuple(_Parser(text).parse()))


# ---------------------------------------------------------------- the string parser
#
# Two steps, as in Kubernetes: a lexer cuts the text into tokens, then a recursive-descent
# parser reads requirements. One subtlety: `in` and `notin` are keywords only where an
# operator may stand; as a key or a value (`x in (in)`) they are plain identifiers.

_END, _ID, _OPEN, _CLOSE, _COMMA, _NOT = "end", "identifier", "(", ")", ",", "!"
_OPERATOR_TOKENS = {"=": EQUALS, "==": DOUBLE_EQUALS, "!=": NOT_EQUALS, ">": GREATER_THAN, "<": LESS_THAN}
_KEYWORDS = {"in": IN, "notin": NOT_IN}
_SPECIAL = set("=!(),><")
_WHITESPACE = set(" \t\r\n")


def _lex(text: str) -> list[tuple[str, str]]:
    """(token kind, literal) pairs, ending with (_END, "")."""
    tokens: list[tuple[str, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append((_END, ""))
            return tokens
        if text[i] in _SPECIAL:
            lit = text[i : i + 2] if text[i : i + 2] in ("!=", "==") else text[i]
            i += len(lit)
            tokens.append((lit if lit in (_OPEN, _CLOSE, _COMMA, _NOT) else "op", lit))
            continue
        start = i
        while i < n and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
            i += 1
        lit = text[start:i]
        tokens.append(("op" if lit in _KEYWORDS else _ID, lit))


class _Parser:
    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def _peek(self, as_value: bool = True) -> tuple[str, str]:
        kind, lit = self.tokens[self.pos]
        # where a key or value may stand, the keywords in/notin are ordinary identifiers
        return (_ID, lit) if as_value and lit in _KEYWORDS and kind == "op" else (kind, lit)

    def _next(self, as_value: bool = True) -> tuple[str, str]:
        token = self._peek(as_value)
        self.pos += 1
        return token

    def parse(self) -> list[Requirement]:
        reqs: list[Requirement] = []
        while True:
            kind, lit = self._peek()
            if kind == _END:
                return reqs
            if kind not in (_ID, _NOT):
                raise SelectorParseError(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                reqs.append(self._requirement())
            except SelectorParseError as e:
                raise SelectorParseError(f"unable to parse requirement: {e}") from None
            kind, lit = self._next()
            if kind == _END:
                return reqs
            if kind != _COMMA:
                raise SelectorParseError(f"found '{lit}', expected: ',' or 'end of string'")
            kind, lit = self._peek()
            if kind not in (_ID, _NOT):
                raise SelectorParseError(f"found '{lit}', expected: identifier after ','")

    def _requirement(self) -> Requirement:
        kind, key = self._next()
        negated = kind == _NOT
        if negated:
            kind, key = self._next()
        if kind != _ID:
            raise SelectorParseError(f"found '{key}', expected: identifier")
        if errs := validate_label_key(key):
            raise SelectorParseError(str(invalid_value("key", key, "; ".join(errs))))
        if negated:
            return Requirement(key, DOES_NOT_EXIST)
        if self._peek()[0] in (_END, _COMMA):
            return Requirement(key, EXISTS)
        kind, lit = self._next(as_value=False)
        op = _KEYWORDS.get(lit) if kind == "op" and lit in _KEYWORDS else _OPERATOR_TOKENS.get(lit)
        if kind != "op" or op is None:
            raise SelectorParseError(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        values = self._value_set() if op in (IN, NOT_IN) else self._exact_value()
        return Requirement(key, op, tuple(values))

    def _exact_value(self) -> list[str]:
        if self._peek()[0] in (_END, _COMMA):
            return [""]  # `x=` means "x has the empty value"
        kind, lit = self._next()
        if kind != _ID:
            raise SelectorParseError(f"found '{lit}', expected: identifier")
        return [lit]

    def _value_set(self) -> list[str]:
        kind, lit = self._next()
        if kind != _OPEN:
            raise SelectorParseError(f"found '{lit}' expected: '('")
        values: list[str] = []
        expect_value = True  # an empty slot (`(,a)`, `(a,)`, `()`) is the empty value
        while True:
            kind, lit = self._next()
            if kind == _ID and expect_value:
                values.append(lit)
                expect_value = False
            elif kind == _COMMA:
                if expect_value:
                    values.append("")
                expect_value = True
            elif kind == _CLOSE:
                if expect_value:
                    values.append("")
                return values
            else:
                expected = "',' or ')'" if not expect_value else "',', ')' or identifier"
                raise SelectorParseError(f"found '{lit}', expected: {expected}")

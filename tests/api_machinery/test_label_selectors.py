"""Label selectors: the string grammar, set-based semantics, matchExpressions, validation."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from api import labels
from api.labels import Requirement, Selector, SelectorParseError

# ---------------------------------------------------------------- strategies

_ALNUM = "abcxyzABZ0189"


def _word(ends: str, middle: str, max_middle: int) -> st.SearchStrategy[str]:
    """One character from `ends`, or end + middle + end: the shape of a label name."""
    edge = st.sampled_from(ends)
    inner = st.text(alphabet=middle, max_size=max_middle)
    return st.one_of(edge, st.tuples(edge, inner, edge).map("".join))


_name = _word(_ALNUM, _ALNUM + "-_.", 12)
_dns_label = _word("abz019", "abz019-", 6)
_prefix = st.lists(_dns_label, min_size=1, max_size=3).map(".".join)
keys = st.one_of(_name, st.tuples(_prefix, _name).map("/".join), st.sampled_from(["in", "notin", "app"]))
values = st.one_of(st.just(""), _name, st.sampled_from(["in", "notin", "prod"]))
ints = st.integers(min_value=0, max_value=10**6).map(str)


@st.composite
def requirements(draw: st.DrawFn) -> Requirement:
    key = draw(keys)
    op = draw(st.sampled_from(labels.OPERATORS))
    if op in (labels.IN, labels.NOT_IN):
        vals = draw(st.lists(values, min_size=1, max_size=4))
    elif op in (labels.GREATER_THAN, labels.LESS_THAN):
        vals = [draw(ints)]
    elif op in (labels.EXISTS, labels.DOES_NOT_EXIST):
        vals = []
    else:
        vals = [draw(values)]
    return Requirement(key, op, tuple(vals))


selectors = st.lists(requirements(), max_size=5).map(lambda rs: Selector(tuple(rs)))
label_sets = st.dictionaries(keys, st.one_of(values, ints), max_size=6)


@st.composite
def messy_text(draw: st.DrawFn) -> str:
    """A valid selector written with random spacing and `=`/`==` spelling."""
    ws = st.sampled_from(["", " ", "  ", "\t"])
    parts = []
    for r in draw(st.lists(requirements(), max_size=4)):
        text = str(r)
        if r.operator == labels.EQUALS and draw(st.booleans()):
            text = text.replace("=", " == ", 1)
        text = text.replace(",", draw(ws) + "," + draw(ws)).replace("(", "(" + draw(ws))
        parts.append(draw(ws) + text + draw(ws))
    return ",".join(parts)


# ---------------------------------------------------------------- round trips


@settings(max_examples=150)
@given(selectors)
def test_parse_of_str_gives_back_the_same_selector(sel: Selector) -> None:
    assert labels.parse(str(sel)) == sel


@settings(max_examples=150)
@given(selectors, label_sets)
def test_round_tripped_selector_matches_the_same_label_sets(sel: Selector, ls: dict[str, str]) -> None:
    assert labels.parse(str(sel)).matches(ls) == sel.matches(ls)


@settings(max_examples=150)
@given(messy_text())
def test_formatting_is_a_fixed_point_for_messy_but_valid_text(text: str) -> None:
    once = str(labels.parse(text))
    assert str(labels.parse(once)) == once


@settings(max_examples=300)
@given(st.text(alphabet="ab/.=!(), <>in otx19-_", max_size=30))
def test_any_text_either_fails_cleanly_or_formats_to_a_fixed_point(text: str) -> None:
    try:
        once = str(labels.parse(text))
    except SelectorParseError:
        return
    assert str(labels.parse(once)) == once


# ---------------------------------------------------------------- canonical form


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("", ""),
        ("   ", ""),
        ("tier!=db,app=nginx", "app=nginx,tier!=db"),
        ("env in (prod, dev ,qa)", "env in (dev,prod,qa)"),
        ("  env   notin(x)  ", "env notin (x)"),
        ("app==nginx", "app==nginx"),
        ("!canary , app", "app,!canary"),
        ("replicas>3,replicas<10", "replicas<10,replicas>3"),
        ("x=,y in (),z in (a,,b)", "x=,y in (),z in (,a,b)"),
        ("in in (in,notin)", "in in (in,notin)"),
        ("example.com/app=web", "example.com/app=web"),
    ],
)
def test_str_is_the_kubernetes_canonical_form(text: str, canonical: str) -> None:
    assert str(labels.parse(text)) == canonical


def test_empty_string_selects_everything() -> None:
    sel = labels.parse("")
    assert sel.empty and sel.matches({}) and sel.matches({"a": "b"}) and sel.matches(None)


# ---------------------------------------------------------------- matching semantics

_POD = {"app": "nginx", "tier": "web", "replicas": "5"}


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("app=nginx", True),
        ("app==nginx", True),
        ("app=apache", False),
        ("app!=apache", True),
        ("missing!=x", True),  # != matches objects that lack the key
        ("missing=x", False),
        ("tier in (web,db)", True),
        ("tier in (db)", False),
        ("missing in (x)", False),
        ("tier notin (db)", True),
        ("tier notin (web)", False),
        ("missing notin (x)", True),  # notin matches objects that lack the key
        ("app", True),
        ("missing", False),
        ("!app", False),
        ("!missing", True),
        ("replicas>4", True),
        ("replicas>5", False),
        ("replicas<6", True),
        ("missing>1", False),
        ("app>1", False),  # a non-integer label never satisfies gt/lt
        ("app=nginx,tier=db", False),  # requirements are ANDed
        ("app=nginx,tier=web,!canary", True),
    ],
)
def test_requirement_semantics(text: str, expected: bool) -> None:
    assert labels.parse(text).matches(_POD) is expected


def test_empty_value_matches_a_label_set_to_empty_string_only() -> None:
    sel = labels.parse("a=")
    assert sel.matches({"a": ""}) and not sel.matches({"a": "x"}) and not sel.matches({})


def test_requires_exact_match_reports_the_single_required_value() -> None:
    assert labels.parse("app=web,tier in (db)").requires_exact_match("tier") == "db"
    assert labels.parse("app=web").requires_exact_match("app") == "web"
    assert labels.parse("app in (a,b)").requires_exact_match("app") is None
    assert labels.parse("app!=x").requires_exact_match("app") is None


def test_selector_is_immutable_and_hashable() -> None:
    sel = labels.parse("a=b")
    with pytest.raises(AttributeError):
        sel.requirements = ()  # type: ignore[misc]
    assert {sel: 1}[labels.parse(" a = b ")] == 1


def test_add_returns_a_new_selector_with_the_requirement() -> None:
    base = labels.parse("a=b")
    more = base.add(Requirement("c", labels.EXISTS))
    assert str(base) == "a=b" and str(more) == "a=b,c"


# ---------------------------------------------------------------- structured selectors


def test_none_label_selector_selects_nothing_but_empty_selects_everything() -> None:
    nothing = labels.from_label_selector(None)
    assert nothing.nothing and not nothing.empty and not nothing.matches({}) and not nothing.matches({"a": "b"})
    everything = labels.from_label_selector({})
    assert everything.empty and everything.matches({}) and everything.matches({"a": "b"})
    assert labels.from_label_selector({"matchLabels": {}, "matchExpressions": []}).empty


def test_match_labels_and_expressions_convert_to_the_equivalent_string_selector() -> None:
    sel = labels.from_label_selector(
        {
            "matchLabels": {"app": "nginx"},
            "matchExpressions": [
                {"key": "tier", "operator": "In", "values": ["web", "cache"]},
                {"key": "env", "operator": "NotIn", "values": ["dev"]},
                {"key": "track", "operator": "Exists"},
                {"key": "canary", "operator": "DoesNotExist"},
            ],
        }
    )
    assert sel == labels.parse("app=nginx,tier in (cache,web),env notin (dev),track,!canary")
    assert str(sel) == "app=nginx,!canary,env notin (dev),tier in (cache,web),track"


def test_unknown_match_expression_operator_is_rejected_with_kubernetes_wording() -> None:
    with pytest.raises(SelectorParseError, match='^"Gt" is not a valid label selector operator$'):
        labels.from_label_selector({"matchExpressions": [{"key": "a", "operator": "Gt", "values": ["1"]}]})


def test_exists_expression_with_values_is_rejected() -> None:
    with pytest.raises(SelectorParseError, match="values set must be empty for exists and does not exist"):
        labels.from_label_selector({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["x"]}]})


def test_in_expression_without_values_is_rejected() -> None:
    with pytest.raises(SelectorParseError, match="for 'in', 'notin' operators, values set can't be empty"):
        labels.from_label_selector({"matchExpressions": [{"key": "a", "operator": "In", "values": []}]})


def test_from_set_requires_every_pair_and_empty_set_selects_everything() -> None:
    sel = labels.from_set({"app": "web", "tier": "db"})
    assert str(sel) == "app=web,tier=db"
    assert sel.matches({"app": "web", "tier": "db", "x": "y"}) and not sel.matches({"app": "web"})
    assert labels.from_set({}).empty and labels.from_set(None).empty


# ---------------------------------------------------------------- errors and validation

_NAME_REGEX_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation "
    "is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "unable to parse requirement: found 'b', expected: in, notin, =, ==, !=, gt, lt"),
        ("a=b=c", "found '=', expected: ',' or 'end of string'"),
        ("a,", "found '', expected: identifier after ','"),
        ("=a", "found '=', expected: !, identifier, or 'end of string'"),
        ("a in b", "unable to parse requirement: found 'b' expected: '('"),
        ("a in (b", "unable to parse requirement: found '', expected: ',' or ')'"),
        ("a in (b c)", "unable to parse requirement: found 'c', expected: ',' or ')'"),
        ("-a=b", f'unable to parse requirement: key: Invalid value: "-a": name part {_NAME_REGEX_MSG}'),
        (
            "x>a",
            'unable to parse requirement: values[0]: Invalid value: "a": '
            "for 'Gt', 'Lt' operators, the value must be an integer",
        ),
    ],
)
def test_parse_errors_say_what_was_found_and_expected(text: str, message: str) -> None:
    with pytest.raises(SelectorParseError) as info:
        labels.parse(text)
    assert str(info.value) == message


def test_too_long_value_is_rejected() -> None:
    with pytest.raises(SelectorParseError, match=r"values\[0\]\[a\]: .*must be no more than 63 characters"):
        labels.parse("a=" + "x" * 64)


def test_validate_label_key_returns_kubernetes_messages() -> None:
    assert labels.validate_label_key("app.kubernetes.io/name") == []
    assert labels.validate_label_key("-x") == ["name part " + _NAME_REGEX_MSG]
    assert labels.validate_label_key("x" * 64) == ["name part must be no more than 63 characters"]
    assert labels.validate_label_key("/x") == ["prefix part must be non-empty"]
    assert labels.validate_label_key("") == ["name part must be non-empty", "name part " + _NAME_REGEX_MSG]
    assert labels.validate_label_key("Bad_Prefix/x") == [
        "prefix part a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, "
        "'-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', "
        "regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
    ]
    (too_many_slashes,) = labels.validate_label_key("a/b/c")
    assert too_many_slashes.startswith("a qualified name must consist of")
    assert too_many_slashes.endswith("with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")


def test_validate_label_value_allows_empty_and_rejects_bad_characters() -> None:
    assert labels.validate_label_value("") == []
    assert labels.validate_label_value("v1.2_3-x") == []
    assert labels.validate_label_value("a b") == [
        "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
        "and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or "
        "'12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
    ]

"""Parsing of constraint rules: round trips, canonical text, refusals and column validation."""

from __future__ import annotations

import pickle

import pytest

from workbench.constraints import ConstraintSyntaxError, Predicate, parse, validate_columns
from workbench.constraints.nodes import And, Comparison, Membership, MissingTest, Not, Or

PAPER_RULES = [
    "birth_weight < 500 or birth_weight > 5500",
    "gestation_week < 22 or gestation_week > 44",
    "mother_age < 23 and parity > 6",
    "mother_age < 20 and parity > 3",
    "gestation_week < 26 and birth_weight > 1499",
    "gestation_week < 29 and birth_weight > 2999",
    "gestation_week < 34 and birth_weight > 3999",
    "birth_weight < 600 and gestation_week > 29",
    "birth_weight < 700 and gestation_week > 32",
    "mother_age is missing or parity is missing or gestation_week is missing or "
    "birth_weight is missing or birth_sex is missing or birth_month is missing",
]


@pytest.mark.parametrize("rule", PAPER_RULES)
def test_paper_rules_parse_and_round_trip(rule: str) -> None:
    pred = parse(rule)
    assert isinstance(pred, Predicate)
    assert pred.text == rule  # the rules are already in canonical form
    assert parse(pred.text) == pred
    assert hash(parse(pred.text)) == hash(pred)


def test_tree_shape_and_columns() -> None:
    pred = parse("mother_age < 20 and parity > 3")
    assert pred.root == And((Comparison("mother_age", "<", 20), Comparison("parity", ">", 3)))
    assert pred.columns == frozenset({"mother_age", "parity"})
    assert parse(PAPER_RULES[-1]).columns == frozenset(
        {"mother_age", "parity", "gestation_week", "birth_weight", "birth_sex", "birth_month"}
    )


def test_precedence_not_binds_tighter_than_and_than_or() -> None:
    pred = parse("not a < 1 and b > 2 or c == 3")
    assert pred.root == Or(
        (
            And((Not(Comparison("a", "<", 1)), Comparison("b", ">", 2))),
            Comparison("c", "==", 3),
        )
    )
    assert parse("a < 1 and (b > 2 or c == 3)").text == "a < 1 and (b > 2 or c == 3)"
    assert parse("not (a < 1 or b < 2)").text == "not (a < 1 or b < 2)"


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("5 > a", "a < 5"),
        ("-2.5 <= a", "a >= -2.5"),
        ("1 != a", "a != 1"),
        ("a<+7", "a < 7"),
        ("a < .5", "a < 0.5"),
        ("a < 1e3", "a < 1000.0"),
        ("((a < 1))", "a < 1"),
        ("(a < 1 and b < 2) and c < 3", "a < 1 and b < 2 and c < 3"),
        ("a < 1 or (b < 2 or c < 3)", "a < 1 or b < 2 or c < 3"),
        ("A_1 IS NOT MISSING", "A_1 is not missing"),
        ("a Not In {1, 2}", "a not in {1, 2}"),
        ("s in {'x', \"y\"}", 's in {"x", "y"}'),
        ("s == 'say \"hi\"'", "s == 'say \"hi\"'"),
        ('s == "it\'s"', 's == "it\'s"'),
        ("s == 'back\\\\slash'", 's == "back\\\\slash"'),
        ("not not a < 1", "not not a < 1"),
        ("\ta\n<\r\n1 ", "a < 1"),
    ],
)
def test_canonical_text(text: str, canonical: str) -> None:
    pred = parse(text)
    assert pred.text == canonical
    assert parse(canonical) == pred


def test_literal_first_comparison_is_flipped() -> None:
    assert parse("20 > mother_age") == parse("mother_age < 20")
    assert parse("'M' == s").root == Comparison("s", "==", "M")


def test_membership_and_missing_nodes() -> None:
    assert parse("s not in {'a', 'b'}").root == Membership("s", ("a", "b"), negated=True)
    assert parse("x is missing").root == MissingTest("x")
    assert parse("x is not missing").root == MissingTest("x", negated=True)


def test_error_message_names_position() -> None:
    with pytest.raises(ConstraintSyntaxError) as info:
        parse("mother_age parity < 3")
    assert str(info.value) == "expected a comparison operator after 'mother_age' at position 11"
    assert info.value.position == 11
    assert isinstance(info.value, ValueError)
    again = pickle.loads(pickle.dumps(info.value))
    assert str(again) == str(info.value)


HOSTILE = [
    ("__import__('os')", "function calls"),
    ("__import__('os').system('ls') < 1", "attribute access"),
    ("a + 1 > 2", "arithmetic"),
    ("a-1 > 2", "arithmetic"),
    ("a * 2 > 2", "arithmetic"),
    ("a < b", "another column"),
    ("1 < 2", "two literals"),
    ("f(a) > 1", "function calls"),
    ("a.b > 1", "attribute access"),
    ("a[0] > 1", "indexing"),
    ("a < 1 < 2", "chained"),
    ("1 < a < 3", "chained"),
    ("a", "comparison operator after 'a'"),
    ("1", "comparison operator after number 1"),
    ("'x'", "comparison operator"),
    ("a < 1 and", "expected a comparison"),
    ("or a < 1", "expected a comparison"),
    ("(a < 1", "expected ')'"),
    ("a < 1)", "unmatched ')'"),
    ("()", "expected a comparison"),
    ("a in {}", "empty set"),
    ("a in {1,}", "after ','"),
    ("a in (1, 2)", "expected '{'"),
    ("a in {1, 'x'}", "only numbers or only strings"),
    ("a in {b}", "another column"),
    ("a is missing 3", "unexpected number 3"),
    ("a is 3", "expected 'missing'"),
    ("a not 3", "expected 'in'"),
    ("a ; b", "unexpected character ';'"),
    ("a < 1; a > 2", "unexpected character ';'"),
    ("lambda: 1", "unexpected character ':'"),
    ('"unterminated', "unterminated string"),
    ("a == 'bad \\n escape'", "unsupported escape"),
    ("a <> 1", "unknown operator '<>'"),
    ("a === 1", "unknown operator '==='"),
    ("a = 1", "use '=='"),
    ("a ! = 1", "'!'"),
    ("a < 1 && b > 2", "use 'and'"),
    ("a < 1 || b > 2", "use 'or'"),
    ("~(a < 1)", "use 'not'"),
    ("a < 1.2.3", "malformed number"),
    ("a < 12abc", "malformed number"),
    ("a < 1e999", "out of range"),
    ("a < 99999999999999999999", "too large"),
    ("a < nan", "another column"),
    ("and < 1", "keyword 'and'"),
    ("a < 1 and and b < 2", "keyword 'and'"),
    ("not", "end of the rule"),
    ("a is not", "expected 'missing'"),
    ("a < 1 b < 2", "unexpected 'b'"),
    ("", "empty rule"),
    ("   \n\t ", "empty rule"),
    ("a < 1 or " * 600 + "a < 1", "limit of 2000"),
    ("x" * 5000, "limit of 2000"),
    ("(" * 200 + "a < 1" + ")" * 200, "nesting deeper than 50"),
    ("not " * 60 + "a < 1", "nesting deeper than 50"),
    ("a < 1 if True else 0", "unexpected 'if'"),
    ("[x for x in y]", "unexpected character '['"),
    ("{1: 2}", "unexpected character ':'"),
    ("{1} < a", "expected a comparison, found '{'"),
    ("a < é", "unexpected character 'é'"),
    ("ａ < 1", "unexpected character"),
    ("a < ١", "unexpected character"),
    ("a\u00a0< 1", "unexpected character"),
    ("a < 1\x00", "unexpected character"),
    ("a < `ls`", "unexpected character '`'"),
    ("@a < 1", "unexpected character '@'"),
    ("a < $x", "unexpected character '$'"),
    ("a < 0x10", "malformed number"),
    ("a < 1_000", "malformed number"),
    ("a < True", "another column"),
    ("a is None", "expected 'missing'"),
]


@pytest.mark.parametrize(("text", "fragment"), HOSTILE)
def test_hostile_inputs_are_refused(text: str, fragment: str) -> None:
    with pytest.raises(ConstraintSyntaxError) as info:
        parse(text)
    assert fragment in str(info.value)
    assert " at position " in str(info.value)
    assert 0 <= info.value.position <= len(text)


def test_exactly_fifty_levels_is_allowed() -> None:
    assert parse("(" * 50 + "a < 1" + ")" * 50) == parse("a < 1")
    assert parse("not " * 50 + "a < 1").text == "not " * 50 + "a < 1"


def test_long_flat_rule_within_limit_parses() -> None:
    text = " or ".join(f"c{i} < {i}" for i in range(150))
    assert len(text) <= 2000
    assert len(parse(text).columns) == 150


def test_rule_too_long_once_normalised_is_refused() -> None:
    text = "a<1e1 or " * 221 + "a<1"  # under 2000 characters; canonical form is longer
    assert len(text) <= 2000
    with pytest.raises(ConstraintSyntaxError, match="too long once normalised"):
        parse(text)


def test_non_text_rule_is_refused() -> None:
    with pytest.raises(ConstraintSyntaxError, match="must be text"):
        parse(42)  # type: ignore[arg-type]


KNOWN = {
    "mother_age": "ordinal",
    "parity": "integer",
    "birth_weight": "continuous",
    "birth_sex": "categorical",
}


def test_validate_columns_reports_problems() -> None:
    assert validate_columns(parse("mother_age < 20 and parity > 3"), KNOWN) == []
    assert validate_columns(parse("motherage < 20"), KNOWN) == [
        "unknown column 'motherage' (did you mean 'mother_age'?)"
    ]
    assert validate_columns(parse("zzz < 1"), KNOWN) == ["unknown column 'zzz'"]
    assert validate_columns(parse("birth_sex < 2"), KNOWN) == [
        "column 'birth_sex' is categorical; '<' needs a numeric column"
    ]
    assert validate_columns(parse("birth_sex == 'F' or birth_sex in {1, 2}"), KNOWN) == []
    problems = validate_columns(
        parse("parity == 'x' or birth_weight in {'a'} or parity < 'y'"), KNOWN
    )
    assert problems == [
        "column 'parity' is integer; it cannot be compared with \"x\"",
        "column 'birth_weight' is continuous; it cannot be compared with \"a\"",
        "'<' on column 'parity' needs a number, not a string",
    ]
    assert validate_columns(parse("x < 1 or x > 2"), {"x": "weird"}) == [
        "column 'x' has unknown type 'weird'"
    ]

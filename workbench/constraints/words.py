"""Row rules in plain English, for reviewers who sign off a spec without reading the syntax."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from workbench.constraints.nodes import And, Comparison, Membership, MissingTest, Node, Not, Or

_OPS = {"<": "is below", "<=": "is at most", ">": "is above", ">=": "is at least",
        "==": "is", "!=": "is not"}


def _name(column: str) -> str:
    return column.replace("_", " ")


def _literal(value: Any) -> str:
    """A string in curly quotes, a number compactly (``2.5``, ``1e+06``)."""
    return f"“{value}”" if isinstance(value, str) else f"{value:.6g}"


def _listing(values: Sequence[Any]) -> str:
    items = [_literal(v) for v in values]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]


def plain_words(node: Node) -> str:
    """A rule's condition in words: ``a < 20 and p > 3`` → "a is below 20 and p is above 3".

    >>> from workbench.constraints import parse
    >>> plain_words(parse("mother_age < 20 and (parity > 3 or birth_sex in {'F'})").root)
    'mother age is below 20 and either parity is above 3 or birth sex is “F”'
    >>> plain_words(parse("a <= 1 and b >= 2 or c is missing").root)
    'a is at most 1 and b is at least 2; or c is missing'
    >>> plain_words(parse("s in {1, 2, 3}").root), plain_words(parse("s not in {'F', 'M'}").root)
    ('s is one of 1, 2 or 3', 's is none of “F”, “M”')
    >>> plain_words(parse("not (a == 1.5 and b != 2)").root)
    'it is not true that a is 1.5 and b is not 2'
    """
    if isinstance(node, Comparison):
        return f"{_name(node.column)} {_OPS[node.op]} {_literal(node.value)}"
    if isinstance(node, Membership):
        if len(node.values) == 1:
            verb = "is not" if node.negated else "is"
            return f"{_name(node.column)} {verb} {_literal(node.values[0])}"
        if node.negated:
            return f"{_name(node.column)} is none of {', '.join(map(_literal, node.values))}"
        return f"{_name(node.column)} is one of {_listing(node.values)}"
    if isinstance(node, MissingTest):
        return f"{_name(node.column)} is {'recorded' if node.negated else 'missing'}"
    if isinstance(node, Not):
        return f"it is not true that {plain_words(node.operand)}"
    if isinstance(node, And):
        return " and ".join(f"either {plain_words(c)}" if isinstance(c, Or) else plain_words(c)
                            for c in node.operands)
    parts = [plain_words(c) for c in node.operands]
    compound = any(isinstance(c, And) for c in node.operands)
    return ("; or " if compound else " or ").join(parts)


def rule_sentence(node: Node, synthetic: bool) -> str:
    """The whole rule as a sentence a reviewer can check.

    >>> from workbench.constraints import parse
    >>> rule_sentence(parse("x is not missing").root, synthetic=True)
    'Reject a synthetic record if x is recorded.'
    >>> rule_sentence(parse("w < 500").root, synthetic=False)
    'Drop a confidential record if w is below 500.'
    """
    who = "Reject a synthetic record" if synthetic else "Drop a confidential record"
    return f"{who} if {plain_words(node)}."

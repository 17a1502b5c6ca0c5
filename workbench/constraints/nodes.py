"""The immutable syntax tree of a rule, its leaves, and its canonical text rendering."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass

Literal = int | float | str

ORDERING = frozenset({"<", "<=", ">", ">="})
FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}


@dataclass(frozen=True, slots=True)
class Comparison:
    """``column op value``; literal-first input is stored flipped so the column is always left."""

    column: str
    op: str
    value: Literal


@dataclass(frozen=True, slots=True)
class Membership:
    """``column [not] in {values}``; values keep the order written."""

    column: str
    values: tuple[Literal, ...]
    negated: bool = False


@dataclass(frozen=True, slots=True)
class MissingTest:
    """``column is [not] missing``."""

    column: str
    negated: bool = False


@dataclass(frozen=True, slots=True)
class Not:
    """Logical negation of one sub-rule."""

    operand: Node


@dataclass(frozen=True, slots=True)
class And:
    """Conjunction of two or more sub-rules, none of them itself an And."""

    operands: tuple[Node, ...]


@dataclass(frozen=True, slots=True)
class Or:
    """Disjunction of two or more sub-rules, none of them itself an Or."""

    operands: tuple[Node, ...]


Leaf = Comparison | Membership | MissingTest
Node = Comparison | Membership | MissingTest | Not | And | Or


def conjoin(parts: Iterable[Node]) -> Node:
    """And of parts, flattening nested Ands so equal rules get equal trees."""
    flat = tuple(_flatten(parts, And))
    return flat[0] if len(flat) == 1 else And(flat)


def disjoin(parts: Iterable[Node]) -> Node:
    """Or of parts, flattening nested Ors so equal rules get equal trees."""
    flat = tuple(_flatten(parts, Or))
    return flat[0] if len(flat) == 1 else Or(flat)


def _flatten(parts: Iterable[Node], kind: type[And] | type[Or]) -> Iterator[Node]:
    """Splice children of the same connective into their parent."""
    for part in parts:
        if isinstance(part, kind):
            yield from part.operands
        else:
            yield part


def leaves(node: Node) -> Iterator[Leaf]:
    """Comparisons, membership and missing tests of a tree, left to right."""
    if isinstance(node, Not):
        yield from leaves(node.operand)
    elif isinstance(node, And | Or):
        for child in node.operands:
            yield from leaves(child)
    else:
        yield node


def render(node: Node) -> str:
    """Canonical text: lower-case keywords, single spaces, only the parentheses needed."""
    if isinstance(node, Comparison):
        return f"{node.column} {node.op} {render_literal(node.value)}"
    if isinstance(node, Membership):
        values = ", ".join(render_literal(v) for v in node.values)
        return f"{node.column} {'not in' if node.negated else 'in'} {{{values}}}"
    if isinstance(node, MissingTest):
        return f"{node.column} is {'not ' if node.negated else ''}missing"
    if isinstance(node, Not):
        inner = render(node.operand)
        return f"not ({inner})" if isinstance(node.operand, And | Or) else f"not {inner}"
    if isinstance(node, And):
        return " and ".join(
            f"({render(c)})" if isinstance(c, Or) else render(c) for c in node.operands
        )
    return " or ".join(render(c) for c in node.operands)


def render_literal(value: Literal) -> str:
    """Literal text that the tokenizer reads back to the same value."""
    if isinstance(value, str):
        if '"' in value and "'" not in value:
            return "'" + value.replace("\\", "\\\\") + "'"
        return '"' + value.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(value, float):
        return repr(float(value))
    return str(int(value))

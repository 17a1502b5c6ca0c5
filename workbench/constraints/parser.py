"""Recursive-descent parser: tokens to a syntax tree; refuses all but boolean comparisons."""

from __future__ import annotations

from workbench.constraints.errors import ConstraintSyntaxError
from workbench.constraints.lexer import Literal, Token, tokenize
from workbench.constraints.nodes import (
    FLIPPED,
    Comparison,
    Membership,
    MissingTest,
    Node,
    Not,
    conjoin,
    disjoin,
)

MAX_LENGTH = 2000
MAX_DEPTH = 50  # each '(' and each 'not' opens one level


def parse_tree(text: str) -> Node:
    """Syntax tree of one rule, or ConstraintSyntaxError saying what is wrong and where."""
    if not isinstance(text, str):
        raise ConstraintSyntaxError(f"a rule must be text, not {type(text).__name__}", 0)
    if len(text) > MAX_LENGTH:
        reason = f"rule has {len(text)} characters, more than the limit of {MAX_LENGTH}"
        raise ConstraintSyntaxError(reason, MAX_LENGTH, text[:MAX_LENGTH])
    return _Parser(text, tokenize(text)).rule()


def _describe(tok: Token) -> str:
    """How a token is named in error messages."""
    if tok.kind == "end":
        return "the end of the rule"
    shown = tok.text if len(tok.text) <= 30 else tok.text[:27] + "..."
    if tok.kind == "keyword":
        return f"keyword '{shown}'"
    if tok.kind in ("number", "string"):
        return f"{tok.kind} {shown}"
    return f"'{shown}'"


class _Parser:
    """One pass over the tokens of one rule; depth counts open parentheses and 'not's."""

    def __init__(self, text: str, tokens: list[Token]) -> None:
        self.text = text
        self.tokens = tokens
        self.i = 0
        self.depth = 0

    def error(self, reason: str, tok: Token) -> ConstraintSyntaxError:
        """Syntax error located at a token."""
        return ConstraintSyntaxError(reason, tok.pos, self.text)

    def peek(self, ahead: int = 0) -> Token:
        """Token at the cursor (or further on), never past the end token."""
        return self.tokens[min(self.i + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """Consume and return the token at the cursor."""
        tok = self.peek()
        self.i = min(self.i + 1, len(self.tokens) - 1)
        return tok

    def is_keyword(self, word: str, ahead: int = 0) -> bool:
        """Whether the token at the cursor is the given keyword."""
        tok = self.peek(ahead)
        return tok.kind == "keyword" and tok.value == word

    def enter(self, tok: Token) -> None:
        """Open one nesting level, refusing to go deeper than MAX_DEPTH."""
        self.depth += 1
        if self.depth > MAX_DEPTH:
            raise self.error(f"nesting deeper than {MAX_DEPTH} levels", tok)

    def rule(self) -> Node:
        """rule := or_expr END."""
        if self.peek().kind == "end":
            raise self.error("empty rule", self.peek())
        node = self.or_expr()
        tok = self.peek()
        if tok.kind == ")":
            raise self.error("unmatched ')'", tok)
        if tok.kind != "end":
            reason = f"unexpected {_describe(tok)}; expected 'and', 'or' or the end of the rule"
            raise self.error(reason, tok)
        return node

    def or_expr(self) -> Node:
        """or_expr := and_expr ('or' and_expr)*."""
        parts = [self.and_expr()]
        while self.is_keyword("or"):
            self.advance()
            parts.append(self.and_expr())
        return disjoin(parts)

    def and_expr(self) -> Node:
        """and_expr := not_expr ('and' not_expr)*."""
        parts = [self.not_expr()]
        while self.is_keyword("and"):
            self.advance()
            parts.append(self.not_expr())
        return conjoin(parts)

    def not_expr(self) -> Node:
        """not_expr := 'not' not_expr | primary."""
        if not self.is_keyword("not"):
            return self.primary()
        self.enter(self.peek())
        self.advance()
        node = Not(self.not_expr())
        self.depth -= 1
        return node

    def primary(self) -> Node:
        """primary := '(' expr ')' | comparison | membership | missing_test."""
        tok = self.peek()
        if tok.kind == "(":
            self.enter(tok)
            self.advance()
            node = self.or_expr()
            close = self.peek()
            if close.kind != ")":
                found = _describe(close)
                reason = f"expected ')' to close the '(' at position {tok.pos}, found {found}"
                raise self.error(reason, close)
            self.advance()
            self.depth -= 1
            return node
        if tok.kind == "ident":
            return self.column_first()
        if tok.kind in ("number", "string"):
            return self.literal_first()
        before = self.tokens[self.i - 1] if self.i > 0 else None
        after = f" after {_describe(before)}" if before is not None else ""
        raise self.error(f"expected a comparison{after}, found {_describe(tok)}", tok)

    def column_first(self) -> Node:
        """COLUMN OP literal | COLUMN ['not'] 'in' {...} | COLUMN 'is' ['not'] 'missing'."""
        col = self.advance()
        tok = self.peek()
        if tok.kind == "op":
            self.advance()
            value = self.literal(f"expected a number or a string after '{tok.text}'")
            return self.no_chain(Comparison(col.text, tok.text, value))
        if self.is_keyword("in") or (self.is_keyword("not") and self.is_keyword("in", 1)):
            negated = self.advance().value == "not"
            if negated:
                self.advance()
            return Membership(col.text, self.literal_set(), negated)
        if self.is_keyword("not"):
            raise self.error("expected 'in' after 'not'", self.peek(1))
        if self.is_keyword("is"):
            self.advance()
            negated = self.is_keyword("not")
            if negated:
                self.advance()
            if not self.is_keyword("missing"):
                word = "'is not'" if negated else "'is'"
                raise self.error(f"expected 'missing' after {word}", self.peek())
            self.advance()
            return MissingTest(col.text, negated)
        if tok.kind == "(":
            raise self.error("function calls are not supported", tok)
        raise self.error(f"expected a comparison operator after '{col.text}'", tok)

    def literal_first(self) -> Node:
        """literal OP COLUMN, stored with the operator flipped so the column comes first."""
        lit = self.advance()
        op = self.peek()
        if op.kind != "op":
            raise self.error(f"expected a comparison operator after {_describe(lit)}", op)
        self.advance()
        col = self.peek()
        if col.kind in ("number", "string"):
            raise self.error("a comparison needs a column on one side, found two literals", col)
        if col.kind != "ident":
            raise self.error(f"expected a column name after '{op.text}'", col)
        self.advance()
        assert lit.value is not None
        return self.no_chain(Comparison(col.text, FLIPPED[op.text], lit.value))

    def literal(self, reason: str) -> Literal:
        """A number or string literal; a column here means column-vs-column, which is refused."""
        tok = self.peek()
        if tok.kind == "ident":
            raise self.error("comparing a column with another column is not supported", tok)
        if tok.kind not in ("number", "string"):
            raise self.error(f"{reason}, found {_describe(tok)}", tok)
        self.advance()
        assert tok.value is not None
        return tok.value

    def literal_set(self) -> tuple[Literal, ...]:
        """'{' literal (',' literal)* '}' holding only numbers or only strings."""
        brace = self.peek()
        if brace.kind != "{":
            raise self.error(f"expected '{{' after 'in', found {_describe(brace)}", brace)
        self.advance()
        if self.peek().kind == "}":
            raise self.error("empty set; 'in' needs at least one value", self.peek())
        values = [self.literal("expected a number or a string in the set")]
        while self.peek().kind == ",":
            self.advance()
            values.append(self.literal("expected a number or a string after ','"))
        close = self.peek()
        if close.kind != "}":
            raise self.error(f"expected ',' or '}}' in the set, found {_describe(close)}", close)
        self.advance()
        if len({isinstance(v, str) for v in values}) > 1:
            raise self.error("a set must hold only numbers or only strings", brace)
        return tuple(values)

    def no_chain(self, node: Comparison) -> Comparison:
        """Refuse chained comparisons such as '1 < a < 3'."""
        if self.peek().kind == "op":
            raise self.error("chained comparisons are not supported", self.peek())
        return node

"""Tokenizer of the constraint language: rule text to tokens carrying their character positions."""

from __future__ import annotations

import math
import re
import string
from dataclasses import dataclass

from workbench.constraints.errors import ConstraintSyntaxError

Literal = int | float | str

KEYWORDS = frozenset({"and", "or", "not", "in", "is", "missing"})
OPERATORS = frozenset({"<", "<=", ">", ">=", "==", "!="})
MAX_INT = 2**53  # integers beyond this are not exactly representable as floats

_NUMBER = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_IDENT_CHARS = frozenset(string.ascii_letters + string.digits + "_")
_DIGITS = frozenset(string.digits)
_WHITESPACE = frozenset(" \t\r\n")
_PUNCTUATION = frozenset("(){},")
_OPERATOR_CHARS = frozenset("<>=!")
_VALUE_END = frozenset({"number", "string", "ident", ")", "}"})
_HINTS = {
    "+": "arithmetic is not supported",
    "-": "arithmetic is not supported",
    "*": "arithmetic is not supported",
    "/": "arithmetic is not supported",
    "%": "arithmetic is not supported",
    "^": "arithmetic is not supported",
    "&": "use 'and' instead of '&'",
    "|": "use 'or' instead of '|'",
    "~": "use 'not' instead of '~'",
    ".": "attribute access is not supported",
    "[": "indexing is not supported",
    "]": "indexing is not supported",
}


@dataclass(frozen=True, slots=True)
class Token:
    """One lexeme; kind is ident/keyword/number/string/op/punctuation or 'end'."""

    kind: str
    text: str
    pos: int
    value: Literal | None = None


def tokenize(text: str) -> list[Token]:
    """Split rule text into tokens, rejecting any character outside the language."""
    tokens: list[Token] = []
    i, n = 0, len(text)
    while i < n:
        ch = text[i]
        if ch in _WHITESPACE:
            i += 1
        elif ch in _PUNCTUATION:
            tokens.append(Token(ch, ch, i))
            i += 1
        elif ch in _OPERATOR_CHARS:
            tokens.append(_operator(text, i))
            i += len(tokens[-1].text)
        elif ch in "'\"":
            value, end = _string(text, i)
            tokens.append(Token("string", text[i:end], i, value))
            i = end
        elif _starts_number(text, i, tokens):
            tokens.append(_number(text, i))
            i += len(tokens[-1].text)
        elif ch in _IDENT_CHARS and ch not in _DIGITS:
            word = _IDENT.match(text, i)
            assert word is not None
            lower = word.group().lower()
            kind = "keyword" if lower in KEYWORDS else "ident"
            tokens.append(Token(kind, word.group(), i, lower if kind == "keyword" else None))
            i = word.end()
        else:
            hint = _HINTS.get(ch)
            reason = f"unexpected character {ch!r}" + (f" ({hint})" if hint else "")
            raise ConstraintSyntaxError(reason, i, text)
    tokens.append(Token("end", "", n))
    return tokens


def _starts_number(text: str, i: int, tokens: list[Token]) -> bool:
    """A sign only starts a number where a value may begin, so 'a-1' reads as arithmetic."""
    ch = text[i]
    nxt = text[i + 1] if i + 1 < len(text) else ""
    if ch in _DIGITS or (ch == "." and nxt in _DIGITS):
        return True
    if ch in "+-" and (nxt in _DIGITS or (nxt == "." and text[i + 2 : i + 3] in _DIGITS)):
        return not tokens or tokens[-1].kind not in _VALUE_END
    return False


def _operator(text: str, i: int) -> Token:
    """Longest run of operator characters, which must be one known comparison operator."""
    j = i
    while j < len(text) and text[j] in _OPERATOR_CHARS:
        j += 1
    op = text[i:j]
    if op in OPERATORS:
        return Token("op", op, i, op)
    if op == "=":
        raise ConstraintSyntaxError("'=' is not a comparison; use '=='", i, text)
    if op == "!":
        raise ConstraintSyntaxError("unexpected '!' (use 'not' or '!=')", i, text)
    raise ConstraintSyntaxError(f"unknown operator {op!r}", i, text)


def _number(text: str, i: int) -> Token:
    """An int or finite float literal, not glued to letters, dots or further digits."""
    match = _NUMBER.match(text, i)
    assert match is not None
    raw, end = match.group(), match.end()
    if end < len(text) and (text[end] in _IDENT_CHARS or text[end] == "."):
        raise ConstraintSyntaxError(f"malformed number {text[i : end + 1]!r}", i, text)
    if any(c in raw for c in ".eE"):
        value: int | float = float(raw)
        if not math.isfinite(value):
            raise ConstraintSyntaxError(f"number {raw} is out of range", i, text)
    else:
        value = int(raw)
        if abs(value) > MAX_INT:
            raise ConstraintSyntaxError(f"integer {_clip(raw)} is too large (limit 2**53)", i, text)
    return Token("number", raw, i, value)


def _string(text: str, i: int) -> tuple[str, int]:
    """A quoted string; only \\\\ and an escaped quote character are allowed escapes."""
    quote, j, out = text[i], i + 1, []
    while j < len(text):
        ch = text[j]
        if ch == quote:
            return "".join(out), j + 1
        if ch == "\\":
            if text[j + 1 : j + 2] not in ("\\", "'", '"'):
                reason = "unsupported escape in string (only \\\\, \\' and \\\" are allowed)"
                raise ConstraintSyntaxError(reason, j, text)
            out.append(text[j + 1])
            j += 2
            continue
        out.append(ch)
        j += 1
    raise ConstraintSyntaxError("unterminated string", i, text)


def _clip(raw: str, limit: int = 30) -> str:
    """Shorten a quoted piece of rule text for an error message."""
    return raw if len(raw) <= limit else raw[: limit - 3] + "..."

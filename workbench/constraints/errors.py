"""Errors of the constraint language: bad rule text and columns a rule needs but cannot find."""

from __future__ import annotations


class ConstraintSyntaxError(ValueError):
    """Rule text outside the language; the message says what is wrong and at which position."""

    def __init__(self, reason: str, position: int, rule: str = "") -> None:
        super().__init__(f"{reason} at position {position}")
        self.reason = reason
        self.position = position
        self.rule = rule

    def __reduce__(self) -> tuple[type, tuple[str, int, str]]:
        """Keep the error picklable despite the custom constructor."""
        return (type(self), (self.reason, self.position, self.rule))


class ConstraintColumnError(KeyError, ValueError):
    """A referenced column is absent; both a KeyError and a ValueError so either handler works."""

    def __init__(self, column: str, where: str) -> None:
        super().__init__(f"column {column!r} used by the rule is not in the {where}")
        self.column = column
        self.where = where

    def __str__(self) -> str:
        """Plain message (KeyError would otherwise wrap it in quotes)."""
        return str(self.args[0])

    def __reduce__(self) -> tuple[type, tuple[str, str]]:
        """Keep the error picklable despite the custom constructor."""
        return (type(self), (self.column, self.where))

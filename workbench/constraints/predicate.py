"""Predicate: a parsed rule (immutable tree) with raw and binned evaluators; parse() builds it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
import pandas as pd

from workbench.constraints.bins import TRUE, evaluate_bins, partial_codes
from workbench.constraints.errors import ConstraintSyntaxError
from workbench.constraints.nodes import Leaf, Node, leaves, render
from workbench.constraints.parser import MAX_LENGTH, parse_tree
from workbench.constraints.raw import evaluate_raw
from workbench.constraints.semantics import BinSemantics

PARTIAL_POLICIES = ("keep", "reject")


@dataclass(frozen=True, repr=False)
class Predicate:
    """A rule describing records to reject; equal rules compare and hash equal."""

    root: Node

    def __repr__(self) -> str:
        return f"Predicate({self.text!r})"

    def __str__(self) -> str:
        return self.text

    @property
    def text(self) -> str:
        """Canonical text; parse(self.text) == self."""
        return render(self.root)

    @property
    def columns(self) -> frozenset[str]:
        """Names of every column the rule reads."""
        return frozenset(leaf.column for leaf in leaves(self.root))

    @property
    def leaves(self) -> tuple[Leaf, ...]:
        """Comparisons, membership and missing tests, left to right."""
        return tuple(leaves(self.root))

    def evaluate_raw(self, frame: pd.DataFrame) -> np.ndarray:
        """Bool mask of rows the rule rejects; comparisons with missing values are False."""
        return evaluate_raw(self.root, frame)

    def evaluate_bins(
        self, codes: Mapping[str, np.ndarray], semantics: Mapping[str, BinSemantics]
    ) -> np.ndarray:
        """Int8 Kleene truth per row: 0 never holds, 2 always holds, 1 depends on the raw value."""
        return evaluate_bins(self.root, codes, semantics)

    def reject_mask_bins(
        self,
        codes: Mapping[str, np.ndarray],
        semantics: Mapping[str, BinSemantics],
        partial: str = "keep",
    ) -> np.ndarray:
        """Rows to reject: truth 2, or truth >= 1 when partial == 'reject'."""
        if partial not in PARTIAL_POLICIES:
            raise ValueError(f"partial must be one of {PARTIAL_POLICIES}, not {partial!r}")
        truth = self.evaluate_bins(codes, semantics)
        return truth >= (1 if partial == "reject" else TRUE)

    def partial_bins(self, semantics: Mapping[str, BinSemantics]) -> dict[str, list[int]]:
        """Per column, codes where some comparison is undecided; only columns that have any."""
        return partial_codes(self.root, semantics)


def parse(text: str) -> Predicate:
    """Parse one rule; ConstraintSyntaxError (a ValueError) says what is wrong and where."""
    pred = Predicate(parse_tree(text))
    canonical = len(pred.text)
    if canonical > MAX_LENGTH:
        reason = f"rule is too long once normalised ({canonical} characters, limit {MAX_LENGTH})"
        raise ConstraintSyntaxError(reason, 0, text)
    return pred

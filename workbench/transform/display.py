"""How a released label reads on screen: open bins in words, the missing value named.

The release keeps its labels as the codecs write them (``release.csv``, ``verify`` and the
examples' hashes depend on them): an integer column's open top bin is ``20+`` (values of 20
and above; ASCII, so it survives any CSV reader; releases before issue 36 wrote ``19<``,
which is still read), its open bottom bin ``<18``, a continuous column's top bin ``>=4000``,
and a missing value of an ``allow`` column the empty string. Plots and tables for people
show them through :func:`shown_label` instead; nothing here changes data.
"""

from __future__ import annotations

import re

#: What an empty label (the default ``missing_label`` of an ``allow`` column) reads as.
MISSING_WORDS = "(missing)"

_NUMBER = r"-?\d+(?:\.\d+)?"
_ABOVE_INT = re.compile(rf"^({_NUMBER})<$")  # '19<': above 19 (releases before issue 36)
_FROM = re.compile(rf"^({_NUMBER})\+$")  # '20+': 20 and above
_PREFIX = re.compile(rf"^(<=|>=|<|>)\s*({_NUMBER})$")
_SIGNS = {"<=": "≤", ">=": "≥", "<": "<", ">": ">"}


def shown_label(label: object) -> str:
    """The label as people read it.

    >>> [shown_label(x) for x in ["20+", "19<", "<18", ">=4000", "<=24", "", "25-29", "M"]]
    ['≥ 20', '≥ 20', '< 18', '≥ 4000', '≤ 24', '(missing)', '25-29', 'M']
    >>> shown_label("2.5<")
    '> 2.5'
    """
    text = "" if label is None else str(label)
    if text == "" or text.lower() == "nan":
        return MISSING_WORDS
    start = _FROM.match(text)
    if start:
        return f"≥ {start.group(1)}"
    above = _ABOVE_INT.match(text)
    if above:
        number = above.group(1)
        if re.fullmatch(r"-?\d+", number):  # an integer column's open top bin: ≥ next integer
            return f"≥ {int(number) + 1}"
        return f"> {number}"
    prefixed = _PREFIX.match(text)
    if prefixed:
        return f"{_SIGNS[prefixed.group(1)]} {prefixed.group(2)}"
    return text

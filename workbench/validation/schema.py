"""The first pass of validation: the packaged JSON Schema, with the criterion kinds filled in.

The schema file holds the document's shape; the ``kind`` enum of a criterion is filled from
the registry of criterion kinds each time (:func:`workbench.criteria.kinds.names`), so a
registered kind is accepted without editing the file.
"""

from __future__ import annotations

import copy
import json
import sys
from functools import lru_cache
from importlib import resources
from typing import Any

# jsonschema's optional IRI format checker imports rfc3987_syntax, which compiles a grammar
# (about 1.3–2.6 s at every start). The spec schema uses no ``format`` keyword, so nothing is
# lost when it is skipped; only possible before jsonschema is first imported.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[assignment]

import jsonschema

from workbench.criteria import kinds
from workbench.specification.errors import Problem, join_path


@lru_cache(maxsize=1)
def _schema_file() -> dict[str, Any]:
    """The packaged schema as written (its kind enum empty)."""
    text = resources.files("workbench.validation").joinpath("spec.schema.json").read_text("utf-8")
    return json.loads(text)


@lru_cache(maxsize=8)
def _schema_for(kind_names: tuple[str, ...]) -> dict[str, Any]:
    schema = copy.deepcopy(_schema_file())
    schema["properties"]["criteria"]["items"]["properties"]["kind"]["enum"] = list(kind_names)
    return schema


def json_schema() -> dict[str, Any]:
    """The JSON Schema of spec documents, with the registered criterion kinds in its enum."""
    return copy.deepcopy(_schema_for(kinds.names()))


@lru_cache(maxsize=8)
def _validator(kind_names: tuple[str, ...]) -> jsonschema.Draft202012Validator:
    return jsonschema.Draft202012Validator(_schema_for(kind_names))


def _schema_path(error: jsonschema.ValidationError) -> str:
    path = ""
    for part in error.absolute_path:
        path = join_path(path, part)
    return path


def _shape(schema: dict[str, Any]) -> str:
    """A sub-schema's type in words, for 'anyOf' messages."""
    kind = schema.get("type", "any value")
    if kind == "array":
        return f"a list of {_shape(schema.get('items', {}))}"
    return ", ".join(kind) if isinstance(kind, list) else str(kind)


#: JSON Schema bound keywords and the comparison they require.
_BOUNDS = {"exclusiveMinimum": ">", "minimum": ">=", "exclusiveMaximum": "<", "maximum": "<="}


def _schema_message(error: jsonschema.ValidationError) -> str:
    """The validator's complaint in the spec's own words."""
    v, value = error.validator, error.validator_value
    if v == "required":
        return error.message.replace("is a required property", "is required")
    if v == "additionalProperties":
        return error.message.replace("Additional properties are not allowed", "unknown field(s)")
    if v in _BOUNDS:
        return f"must be {_BOUNDS[v]} {value}"
    if v == "enum":
        return f"must be one of {', '.join(json.dumps(x) for x in value)}"
    if v == "const":
        return f"must be {json.dumps(value)}"
    if v == "type":
        return f"must be of type {value}"
    if v == "pattern" and isinstance(error.schema, dict) and "x-pattern-words" in error.schema:
        return f"must be {error.schema['x-pattern-words']}"
    if v == "minLength" and value == 1:
        return "must not be empty"
    if v == "anyOf":
        return "must be " + " or ".join(_shape(s) for s in value)
    return error.message


def schema_problems(document: Any) -> list[Problem]:
    """Shape and type problems found by the JSON Schema."""
    problems = [Problem(_schema_path(e), _schema_message(e))
                for e in _validator(kinds.names()).iter_errors(document)]
    return sorted(set(problems))

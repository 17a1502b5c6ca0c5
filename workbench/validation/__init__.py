"""Spec validation: the JSON Schema, each section's semantic checks, whole-spec checks, and
loading/freezing spec files.

It sits above ``criteria`` and ``generators`` in the layers because it reads their registries
(criterion kinds' parameters, generator families' hyperparameters); the immutable model it
builds is :mod:`workbench.specification`, which sits below them.
"""

from workbench.validation.files import freeze_document, load_spec, save_spec
from workbench.validation.schema import json_schema
from workbench.validation.validate import build_spec

__all__ = ["build_spec", "freeze_document", "json_schema", "load_spec", "save_spec"]

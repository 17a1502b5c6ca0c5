"""Transformations: clip and bin raw columns into categorical codes and back, vectorised.

Everything here is built from public parameters (edges, declared domains); the
data never decides a bin, a label or a domain size.
"""

from workbench.transform.codecs import BinsCodec, Codec, GroupsCodec, IdentityCodec, coarse_lookup
from workbench.transform.column import ColumnSpec
from workbench.transform.domain import Domain
from workbench.transform.number import NumberCodec
from workbench.transform.table import EncodingError, TableCodec

__all__ = [
    "BinsCodec",
    "Codec",
    "ColumnSpec",
    "Domain",
    "EncodingError",
    "GroupsCodec",
    "IdentityCodec",
    "NumberCodec",
    "TableCodec",
    "coarse_lookup",
]

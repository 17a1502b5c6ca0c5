"""A Bayesian network's structure learnt from a PUBLIC proxy (``structure: public``, issue 28),
shared by the families that learn a network: ``plausible_deniability`` (noisy-entropy CFS on
D_T, per the paper) and ``privbayes`` (GreedyBayes with the exponential mechanism). Both spend
ε and records on a structure that, at Adult's size, the noise swamps; when a public proxy of
the same population exists (the workbench's premise), the same search runs on the proxy's
exact statistics, costs no ε and reads no record of R, so all of ε_gen goes to the parameters.
Why that keeps each family's guarantee is argued in its own docstring.

**The file.** The spec names it (``structure_proxy``) and pins its bytes
(``structure_proxy_sha256``); :mod:`workbench.generators.public_proxy` (shared with the
workload's public measurements) resolves, checks, reads and encodes it: the family's
``preflight`` before any budget and :func:`structure_codes` again before every read, so a fit
never learns from a file other than the one the frozen spec names, and its codes share D_P's
domain. The guarantee, ``describe`` and the bundle's configuration name it. Nothing here reads
confidential data.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from workbench.generators.public_proxy import proxy_codes, proxy_name_problem, sha256_problem
from workbench.specification.params import Param, one_of, optional

if TYPE_CHECKING:
    import numpy as np

    from workbench.privacy import PrivacyContext

#: Where the network's structure comes from (``structure``).
STRUCTURES = ("dp", "public")


def structure_params(dp_words: str) -> dict[str, Param]:
    """The three declared hyperparameters of a structure's source (``dp_words``: what ``dp``
    means for the family)."""
    return {
        "structure": Param("dp", one_of(*STRUCTURES), f"where the network's structure comes "
                           f"from: dp ({dp_words}) or public (the same search on the public "
                           "proxy structure_proxy: no ε, no records of R)",
                           control="choice", choices=STRUCTURES),
        "structure_proxy": Param(None, optional(proxy_name_problem), "the PUBLIC proxy file the "
                                 "structure is learnt from (structure: public)",
                                 control="text", placeholder="path of a public CSV"),
        "structure_proxy_sha256": Param(None, optional(sha256_problem), "SHA-256 of "
                                        "structure_proxy's bytes, checked before any budget",
                                        control="text", placeholder="sha256sum of the file"),
    }


def source_problems(params: Mapping[str, Any]) -> list[str]:
    """A public structure names its proxy and pins it; a dp one names none.

    >>> source_problems({"structure": "public"})[0][:40]
    'structure: public needs structure_proxy '
    >>> source_problems({"structure_proxy": "p.csv"})
    ['structure_proxy only apply with structure: public']
    """
    public = params.get("structure", "dp") == "public"
    proxy = [k for k in ("structure_proxy", "structure_proxy_sha256") if params.get(k) is not None]
    if public and len(proxy) < 2:
        return ["structure: public needs structure_proxy (a public file) and "
                "structure_proxy_sha256 (its SHA-256)"]
    if not public and proxy:
        return [f"{' and '.join(proxy)} only apply with structure: public"]
    return []


def structure_words(params: Mapping[str, Any], dp_words: str) -> str:
    """Where the network's structure comes from, naming a public proxy and its digest."""
    if params.get("structure", "dp") != "public":
        return f"structure learnt with DP ({dp_words})"
    return (f"structure learnt from the PUBLIC proxy {params.get('structure_proxy')!r} "
            f"(SHA-256 {params.get('structure_proxy_sha256')}): no ε, no records of R")


def structure_codes(generator: Any) -> np.ndarray:
    """The pinned proxy of ``generator`` (its ``structure_proxy`` and ``_sha256``) encoded with
    its bound codec, checked against the pin before every read; ValueError naming the field,
    or saying the generator was never bound to a spec (the proxy is read through it)."""
    spec, table = generator.bound_spec_, generator.bound_table_
    if spec is None or table is None:
        raise ValueError(f"{generator.name}: structure: public reads its proxy through the "
                         "spec; bind the generator to a spec and the configuration's codec "
                         "(generators.generator_for) before fit")
    return proxy_codes(spec, table, generator.structure_proxy,
                       generator.structure_proxy_sha256, field="structure_proxy")


class PublicStructure:
    """What a family that learns a network has for its structure's source (a mixin: put it
    before :class:`~workbench.generators.family.GeneratorFamily`)."""

    structure: str

    @property
    def public(self) -> bool:
        """Whether the structure is learnt from the public proxy (``structure: public``)."""
        return self.structure == "public"

    def preflight(self) -> None:
        """A public structure's proxy exists, has the pinned bytes and encodes under the
        bound codec, before any budget is spent (ValueError naming the field)."""
        if self.public:
            structure_codes(self)


def log_public_structure(privacy: PrivacyContext, family: str, name: str, sha256: str) -> None:
    """The ledger line saying the network's structure came from the pinned public proxy: no ε
    and no record of R (published with the accepted iteration, ``engine.bundle``)."""
    privacy.log_event("public_structure", family=family, file=name, sha256=sha256,
                      epsilon=0.0, records_of_r=0, iteration=privacy.iteration)

"""A Bayesian network's structure learnt from a PUBLIC proxy (``structure: public``, issue 28),
shared by the families that learn a network: ``plausible_deniability`` (noisy-entropy CFS on
D_T, per the paper) and ``privbayes`` (GreedyBayes with the exponential mechanism). Both spend
ε and records on a structure that, at Adult's size, the noise swamps; when a public proxy of
the same population exists (the workbench's premise), the same search runs on the proxy's
exact statistics, costs no ε and reads no record of R, so all of ε_gen goes to the parameters.
Why that keeps each family's guarantee is argued in its own docstring.

**The file.** The spec names it (``structure_proxy``: absolute, or relative to the working
directory, else to the repository, as the distinguisher's proxy) and pins its bytes
(``structure_proxy_sha256``). :func:`check_proxy` resolves the path and compares the digest;
the run calls it through the family's ``preflight`` before any budget, and :func:`proxy_codes`
again before every read, so a fit never learns from a file other than the one the frozen spec
names. The proxy is read like the run reads R (spec columns only, the declared file format,
the domain policies, the cleaning rules) and encoded with the configuration's codecs, so its
codes share D_P's domain. The guarantee, ``describe`` and the bundle's configuration name it.
Nothing here reads confidential data; messages name the field and the file, and the file's
digest (a public file's hash) when it differs from the pin.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from workbench.criteria.kinds.distinguisher import proxy_path
from workbench.spec.params import Param, one_of, optional

if TYPE_CHECKING:
    from workbench.privacy import PrivacyContext
    from workbench.spec.model import Spec
    from workbench.spec.space import Configuration

#: Where the network's structure comes from (``structure``).
STRUCTURES = ("dp", "public")
_HEX64 = re.compile(r"[0-9a-f]{64}")
_CODES: dict[tuple[Any, ...], np.ndarray] = {}


def sha256_problem(value: Any) -> str | None:
    """A SHA-256 digest: 64 lowercase hexadecimal characters.

    >>> sha256_problem("ab"), sha256_problem("0" * 64)
    ('must be a SHA-256 digest (64 lowercase hex characters)', None)
    """
    ok = isinstance(value, str) and _HEX64.fullmatch(value) is not None
    return None if ok else "must be a SHA-256 digest (64 lowercase hex characters)"


def text_problem(value: Any) -> str | None:
    """A non-empty string (a file path).

    >>> text_problem(""), text_problem("out/proxy.csv")
    ('must be a non-empty file path', None)
    """
    return None if isinstance(value, str) and value.strip() else "must be a non-empty file path"


def structure_params(dp_words: str) -> dict[str, Param]:
    """The three declared hyperparameters of a structure's source (``dp_words``: what ``dp``
    means for the family)."""
    return {
        "structure": Param("dp", one_of(*STRUCTURES), f"where the network's structure comes "
                           f"from: dp ({dp_words}) or public (the same search on the public "
                           "proxy structure_proxy: no ε, no records of R)",
                           control="choice", choices=STRUCTURES),
        "structure_proxy": Param(None, optional(text_problem), "the PUBLIC proxy file the "
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


def file_sha256(path: Path) -> str:
    """SHA-256 of a file's bytes, read in blocks."""
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def check_proxy(name: str, sha256: str) -> Path:
    """The resolved proxy file; ValueError when it is absent or its bytes are not the pinned
    ones (before any budget: the family's ``preflight``, and before every read)."""
    path = proxy_path(name)
    if not path.is_file():
        raise ValueError(f"structure_proxy {name!r} does not exist "
                         "(looked in the working directory and in the repository); "
                         "structure: public learns the network from it")
    actual = file_sha256(path)
    if actual != sha256:
        raise ValueError(f"structure_proxy {name!r} has SHA-256 "
                         f"{actual}, but the spec pins structure_proxy_sha256 {sha256}: "
                         "the file is not the public proxy this design was frozen with")
    return path


def proxy_codes(spec: Spec, configuration: Configuration, name: str, sha256: str
                ) -> np.ndarray:
    """The pinned proxy read, cleaned and encoded with ``configuration``'s codecs (cached per
    file digest, spec and configuration; one proxy at a time)."""
    from workbench.transform.clean import clean
    from workbench.transform.raw import apply_domain_policy, read_raw

    path = check_proxy(name, sha256)
    key = (str(path), sha256, spec.sha256, configuration.key)
    if key not in _CODES:
        frame = read_raw(path, spec.columns, spec.file_format)
        frame = clean(apply_domain_policy(frame, spec.columns), spec)
        if len(frame) == 0:
            raise ValueError(f"structure_proxy {name!r} has no "
                             "record left after the spec's cleaning")
        _CODES.clear()
        _CODES[key] = spec.table_codec(configuration).encode(frame)
    return _CODES[key]


def log_public_structure(privacy: PrivacyContext, family: str, name: str, sha256: str) -> None:
    """The ledger line saying the network's structure came from the pinned public proxy: no ε
    and no record of R (published with the accepted iteration, ``engine.bundle``)."""
    privacy.log_event("public_structure", family=family, file=name, sha256=sha256,
                      epsilon=0.0, records_of_r=0, iteration=privacy.iteration)

"""Short readable names for configurations: only what differs between the ones compared."""

from __future__ import annotations

from collections.abc import Sequence

from workbench.specification import Configuration

_SHORT = {"epsilon_split": "split", "degree": "k", "theta": "θ"}


def _parts(config: Configuration) -> list[tuple[str, str]]:
    """(field, text) pairs describing one configuration."""
    parts = [(f"t:{col}", alt) for col, alt in config.transforms]
    parts += [(f"h:{k}", f"{_SHORT.get(k, k)}={v:g}" if isinstance(v, float) else
               f"{_SHORT.get(k, k)}={v}") for k, v in config.hyperparameters]
    parts.append(("min_count", f"m={config.min_count}"))
    return parts


def config_labels(configs: Sequence[Configuration]) -> list[str]:
    """A label per configuration from the fields that vary (all fields when only one).

    Transformation alternatives come first, joined by '/', then hyperparameters and min_count.
    """
    all_parts = [dict(_parts(c)) for c in configs]
    fields = list(dict.fromkeys(f for parts in all_parts for f in parts))
    varying = [f for f in fields if len({p.get(f) for p in all_parts}) > 1] or fields
    labels = []
    for parts in all_parts:
        transforms = "/".join(parts[f] for f in varying if f.startswith("t:") and f in parts)
        rest = " ".join(parts[f] for f in varying if not f.startswith("t:") and f in parts)
        labels.append(" ".join(x for x in (transforms, rest) if x))
    return labels

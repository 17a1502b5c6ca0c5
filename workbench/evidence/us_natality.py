"""Reading the US 2019 public-use natality samples and mapping them onto the Israeli schema."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

#: The six columns of the Israeli live-births schema, in release order.
PROXY_COLUMNS: tuple[str, ...] = (
    "birth_month",
    "mother_age",
    "parity",
    "gestation_week",
    "birth_sex",
    "birth_weight",
)

#: The raw columns a US sample must provide.
US_COLUMNS: tuple[str, ...] = (
    "mother_age",
    "parity",
    "gestation_week",
    "is_female",
    "date_of_birth",
    "birth_weight",
)

#: How each schema column is derived from the US sample (written into the facts provenance).
COLUMN_MAPPING: dict[str, str] = {
    "birth_month": "month of date_of_birth (YYYY-MM-15), 1..12",
    "mother_age": "mother_age, years, integer, as recorded",
    "parity": "parity, live births including this one, integer >= 1, as recorded",
    "gestation_week": "gestation_week, completed weeks, integer, as recorded",
    "birth_sex": '"F" if is_female else "M"',
    "birth_weight": "birth_weight, grams, integer, as recorded (implausible values kept)",
}


def _as_bool(col: pd.Series) -> np.ndarray:
    """``is_female`` as booleans, whether pandas parsed it as bool or as text."""
    if pd.api.types.is_bool_dtype(col):
        return col.to_numpy(dtype=bool)
    text = col.astype(str).str.strip().str.lower()
    bad = ~text.isin(["true", "false", "1", "0"])
    if bad.any():
        raise ValueError(f"is_female: unexpected values {sorted(text[bad].unique())[:5]}")
    return text.isin(["true", "1"]).to_numpy()


def to_schema(raw: pd.DataFrame) -> pd.DataFrame:
    """Map a US natality sample onto the six schema columns, keeping every value as recorded."""
    missing = [c for c in US_COLUMNS if c not in raw.columns]
    if missing:
        raise ValueError(f"US natality sample lacks columns {missing}")
    if raw[list(US_COLUMNS)].isna().any().any():
        raise ValueError("US natality sample has missing values; the mapping expects none")
    month = pd.to_datetime(raw["date_of_birth"], format="%Y-%m-%d").dt.month
    female = _as_bool(raw["is_female"])
    out = pd.DataFrame(
        {
            "birth_month": month.to_numpy(dtype=np.int64),
            "mother_age": raw["mother_age"].to_numpy(dtype=np.int64),
            "parity": raw["parity"].to_numpy(dtype=np.int64),
            "gestation_week": raw["gestation_week"].to_numpy(dtype=np.int64),
            "birth_sex": np.where(female, "F", "M"),
            "birth_weight": raw["birth_weight"].to_numpy(dtype=np.int64),
        }
    )
    return out[list(PROXY_COLUMNS)]


def read_us_sample(path: str | Path) -> pd.DataFrame:
    """Read a US natality sample file (csv or csv.gz) and map it onto the schema."""
    return to_schema(pd.read_csv(path))

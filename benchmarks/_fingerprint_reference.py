"""The first ``table_fingerprint`` (session 45: ``sort_values`` over every column, text as
Python objects), kept verbatim: the reference whose hex values the fast one must give
(tests/test_fingerprint_scale.py) and the "before" figure of benchmarks/bundle_scale.py."""

from __future__ import annotations

import hashlib
import hmac
import json

import numpy as np
import pandas as pd


def reference_fingerprint(frame: pd.DataFrame, key: bytes) -> str:
    """The first implementation of ``table_fingerprint`` (session 45), unchanged."""
    names = sorted(str(c) for c in frame.columns)
    canon = {}
    for name in names:
        series = frame[name]
        if pd.api.types.is_numeric_dtype(series):
            canon[name] = series.to_numpy(dtype=np.float64, na_value=np.nan) + 0.0
        else:
            canon[name] = series.astype("string").fillna("\x00").to_numpy(dtype=object)
    table = pd.DataFrame(canon).sort_values(names, kind="mergesort", ignore_index=True)
    mac = hmac.new(key, digestmod=hashlib.sha256)
    mac.update(json.dumps({"columns": names, "rows": len(table)}).encode())
    for name in names:
        values = table[name].to_numpy()
        if values.dtype == np.float64:
            mac.update(np.ascontiguousarray(values, dtype="<f8").tobytes())
        else:
            mac.update("\x1f".join(values).encode("utf-8"))
        mac.update(b"\x1e")
    return mac.hexdigest()

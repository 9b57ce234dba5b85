"""Keep secrets (env values, header values, tokens) out of logs, status and errors."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

MASK = "***"
_SECRET_KEY = re.compile(r"(key|token|secret|passw|auth|cookie|credential|session|bearer)", re.I)


def redact(text: str, secrets: Iterable[str]) -> str:
    """Replace every occurrence of each secret value (longest first) with ``***``."""
    for s in sorted({s for s in secrets if s and len(s) >= 4}, key=len, reverse=True):
        text = text.replace(s, MASK)
    return text


def redact_mapping(values: Mapping[str, str], *, all_values: bool = True) -> dict[str, str]:
    """A copy safe to show: every value masked (env, headers), or only secret-looking keys."""
    out: dict[str, str] = {}
    for k, v in values.items():
        out[k] = MASK if (all_values or _SECRET_KEY.search(k)) and v else v
    return out

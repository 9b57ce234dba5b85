"""What the scripted server's tests send it: litellm (its real HTTP path, the local cost map)
and plain HTTP posts."""

from __future__ import annotations

import json
import os
import urllib.request
from typing import Any

import pytest

from tests.llm.scripted_server import ScriptedLLM

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

litellm.suppress_debug_info = True

# litellm's pydantic models warn about ReadOnly TypedDict items on first use: noise.
QUIET = pytest.mark.filterwarnings("ignore:Item.*ReadOnly:UserWarning", "ignore:Items.*ReadOnly:UserWarning")

MESSAGES = [{"role": "user", "content": "hi"}]


def post(llm: ScriptedLLM, path: str, body: dict[str, Any]) -> str:
    req = urllib.request.Request(
        llm.url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()

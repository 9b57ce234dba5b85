"""editor-extension/src/protocol/ mirrors agent_ls/server/protocol/, field by field.

The TypeScript modules (every ``*.ts`` of that folder: names and values, the payloads of
prompts, sessions, MCP servers, questions and commands) are read as text (no Node needed):
their ``export const`` method names, error codes and value lists, and the fields of their
interfaces, are compared with the Python definitions (every module of the
``agent_ls.server.protocol`` package: ``methods`` for the names and values, the payload classes
registered by the others). A payload class added in Python without its TypeScript interface (or a field
renamed on one side only) fails here.
"""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import attrs

from agent_ls.server import protocol
from agent_ls.server.protocol import methods as P
from agent_ls.server.protocol.codec import _PAYLOADS, camel

# Importing every module of the package registers its payload classes.
PY_MODULES = [importlib.import_module(f"{protocol.__name__}.{m.name}") for m in pkgutil.iter_modules(protocol.__path__)]

TS_DIR = Path(__file__).resolve().parents[2] / "editor-extension" / "src" / "protocol"
TS_FILES = sorted(TS_DIR.glob("*.ts"))
# One text: each declaration is matched at the start of a line, whichever file it is in.
TS = "\n".join(f.read_text(encoding="utf-8") for f in TS_FILES)

# Python payload class -> TypeScript interface, where the names differ.
TS_NAMES = {
    "Range": "LspRange",
    "ResumeResult": "SessionsResumeResult",
    "ToolInfoPayload": "StatusTool",
    "ServerStatusPayload": "ServerStatus",
    "ResourcePayload": "McpResource",
    "PromptArgumentPayload": "McpPromptArgument",
    "PromptPayload": "McpPrompt",
    "PromptMessagePayload": "PromptMessage",
    "GetPromptResult": "PromptsGetResult",
    "ElicitResultPayload": "ElicitResult",
}
NOT_MIRRORED = {"NoParams"}  # no fields

# What the client sends (request params, answers to server requests): a field Python
# requires must not be optional in TypeScript.
CLIENT_SENT = {
    "PromptParams", "CancelParams", "SessionParams", "NewSessionParams", "ServerParams", "SetEnabledParams",
    "SignInParams", "TrustParams", "ResourcesListParams", "ReadResourceParams", "PromptsListParams",
    "GetPromptParams", "CallToolParams", "Attachment", "Range", "ApproveResult", "TrustServerResult",
    "ElicitResultPayload", "SetWorkspaceTrustParams", "EditorTrustParams", "TrustWorkspaceResult",
    "ChangeOutcomeParams", "ChangeContentParams", "ReviewEditResult", "ToolOutputParams", "ModelsParams",
    "SetModelParams", "EditorIntelligenceResult", "IntelligenceLocation", "IntelligenceDiagnostic",
    "IntelligenceSymbol", "ActionArgs", "TrustWorkspaceArgs", "CheckpointsParams", "RewindParams", "RedoParams",
    "SetSandboxGrantParams",
    "JobsParams", "StopJobParams", "AppCallToolParams", "AppContextParams", "AppResourceParams",
}


def ts_consts() -> dict[str, str | int]:
    out: dict[str, str | int] = {}
    for name, value in re.findall(r'^export const (\w+) = ("[^"]*"|-?\d+);', TS, flags=re.M):
        out[name] = value.strip('"') if value.startswith('"') else int(value)
    return out


def ts_list(name: str) -> list[str]:
    m = re.search(rf"^export const {name} = \[(.*?)\] as const;", TS, flags=re.M | re.S)
    assert m, f"src/protocol/ has no `export const {name} = [...] as const`"
    consts = ts_consts()
    items = [i.strip() for i in m.group(1).split(",") if i.strip()]
    return [i.strip('"') if i.startswith('"') else str(consts[i]) for i in items]


def ts_interfaces() -> dict[str, dict[str, bool]]:
    """Interface name -> {field: optional}, top-level members only."""
    out: dict[str, dict[str, bool]] = {}
    for m in re.finditer(r"^export interface (\w+)(?: extends [\w, ]+)? \{$", TS, flags=re.M):
        fields: dict[str, bool] = {}
        depth = 1
        in_comment = False
        for line in TS[m.end():].splitlines()[1:]:
            stripped = line.strip()
            if in_comment:
                in_comment = "*/" not in stripped
                continue
            if stripped.startswith("/*"):
                in_comment = "*/" not in stripped
                continue
            if stripped.startswith("//"):
                continue
            if depth == 1:
                f = re.match(r"(\w+)(\?)?\s*:", stripped)
                if f:
                    fields[f.group(1)] = bool(f.group(2))
            code = re.sub(r'"[^"]*"', "", stripped.split("//")[0])
            depth += code.count("{") - code.count("}")
            if depth <= 0:
                break
        out[m.group(1)] = fields
    return out


def py_payloads() -> list[type]:
    return sorted((c for c in _PAYLOADS if c.__module__.startswith(f"{protocol.__name__}.")), key=lambda c: c.__name__)


def test_method_names_commands_and_values_match() -> None:
    consts = ts_consts()
    methods = {*P.CLIENT_REQUESTS, *P.CLIENT_NOTIFICATIONS, *P.SERVER_REQUESTS, *P.SERVER_NOTIFICATIONS, *P.COMMANDS}
    py_names = {k: v for k, v in vars(P).items() if k.isupper() and isinstance(v, str) and v in methods}
    assert set(py_names.values()) == methods
    mismatched = {k: (v, consts.get(k)) for k, v in py_names.items() if consts.get(k) != v}
    assert mismatched == {}, "src/protocol/ must export the same constant name and value: {name: (py, ts)}"
    ts_methods = {k: v for k, v in consts.items() if isinstance(v, str) and ("/" in v or v.startswith("agent-ls."))}
    assert set(ts_methods) - set(py_names) == set(), "src/protocol/ defines methods protocol/methods.py does not"
    assert ts_list("CLIENT_REQUESTS") == list(P.CLIENT_REQUESTS)
    assert ts_list("SERVER_REQUESTS") == list(P.SERVER_REQUESTS)
    assert ts_list("SERVER_NOTIFICATIONS") == list(P.SERVER_NOTIFICATIONS)
    assert ts_list("CLIENT_NOTIFICATIONS") == list(P.CLIENT_NOTIFICATIONS)
    assert ts_list("COMMANDS") == list(P.COMMANDS)
    for name in ("INVALID_PARAMS", "REQUEST_FAILED", "REQUEST_CANCELLED", "INTERNAL_ERROR"):
        assert consts.get(name) == getattr(P, name), name
    assert ts_list("EVENT_TYPES") == list(P.EVENT_TYPES)
    assert ts_list("APPROVAL_ANSWERS") == list(P.APPROVAL_ANSWERS)
    assert ts_list("ELICIT_ACTIONS") == list(P.ELICIT_ACTIONS)
    assert ts_list("WORKSPACE_TRUST_STATES") == list(P.WORKSPACE_TRUST_STATES)
    assert ts_list("REVIEW_DECISIONS") == list(P.REVIEW_DECISIONS)
    assert ts_list("CHANGE_STATUSES") == list(P.CHANGE_STATUSES)
    assert ts_list("CHANGE_OUTCOMES") == list(P.CHANGE_OUTCOMES)
    assert ts_list("PLAN_STATUSES") == list(P.PLAN_STATUSES)
    assert ts_consts()["REVIEW_CAPABILITY"] == P.REVIEW_CAPABILITY
    assert ts_consts()["INTELLIGENCE_CAPABILITY"] == P.INTELLIGENCE_CAPABILITY
    assert ts_list("INTELLIGENCE_KINDS") == list(P.INTELLIGENCE_KINDS)


def test_every_payload_has_an_interface_with_the_same_fields() -> None:
    interfaces = ts_interfaces()
    problems: list[str] = []
    for cls in py_payloads():
        if cls.__name__ in NOT_MIRRORED:
            continue
        ts_name = TS_NAMES.get(cls.__name__, cls.__name__)
        ts = interfaces.get(ts_name)
        if ts is None:
            problems.append(f"{cls.__name__}: no `export interface {ts_name}` in src/protocol/ "
                            "(add it, or map the name in TS_NAMES)")
            continue
        py = {camel(a.name): a for a in attrs.fields(cls)}
        if set(py) != set(ts):
            problems.append(f"{cls.__name__} vs {ts_name}: only in Python {sorted(set(py) - set(ts))}, "
                            f"only in TypeScript {sorted(set(ts) - set(py))}")
            continue
        if cls.__name__ in CLIENT_SENT:
            loose = [f for f, a in py.items() if a.default is attrs.NOTHING and ts[f]]
            if loose:
                problems.append(f"{ts_name}: {loose} are required by the server but optional in TypeScript")
    assert problems == [], "\n".join(problems)


def test_the_parser_sees_nested_and_commented_members() -> None:
    """The check itself: nested object types and doc comments do not confuse it."""
    interfaces = ts_interfaces()
    assert interfaces["StoredMessage"] == {"role": False, "content": True, "tool_calls": True, "tool_call_id": True,
                                           "name": True, "display": True, "run": True}
    assert interfaces["CancelParams"] == {"sessionId": False}
    assert "phase" in interfaces["ServerError"] and "message" in interfaces["ServerError"]


def test_the_index_re_exports_every_protocol_module() -> None:
    """src/protocol/index.ts is what the extension imports: a module it leaves out is checked here
    but invisible to the extension."""
    index = (TS_DIR / "index.ts").read_text(encoding="utf-8")
    exported = set(re.findall(r'^export (?:type )?\* from "\./(\w+)";$', index, flags=re.M))
    modules = {f.stem for f in TS_FILES} - {"index"}
    assert modules and exported == modules

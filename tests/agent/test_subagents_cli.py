"""Subagents in ``agent-ls chat`` (issue 42), a real process against the scripted LLM: the
children's tool lines are printed indented with the agent's name, their approvals are asked on
stdin one at a time with the agent's name and task, and each answer reaches its child only; the
turn's usage counts the children's tokens apart and in the total."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.agent.test_chat_cli import chat
from tests.llm.scripted_server import ScriptedLLM, respond, text, tool_calls
from tests.runtime.test_subagents import Router

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def test_children_print_indented_and_ask_one_at_a_time(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    router = Router()
    router.add("", tool_calls([("agent", {"prompt": "taskA", "description": "write one"}),
                               ("agent", {"prompt": "taskB", "description": "write two"})]), text("Both done."))
    router.add("taskA", tool_calls([("bash", {"command": "echo one > one.txt"})]), text("A done"))
    router.add("taskB", tool_calls([("bash", {"command": "echo two > two.txt"})]), text("B done"))
    llm.script(*[respond(router) for _ in range(10)])
    proc = chat(llm, tmp_path, ws, "write", "both", stdin="o\nd\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("Both done.")
    err = proc.stderr
    # the questions, in the order they were asked: the first allowed, the second denied
    asked = [line for line in err.splitlines() if line.strip().startswith("(subagent general (write ")]
    assert len(asked) == 2, err
    first, second = ("one", "two") if "write one" in asked[0] else ("two", "one")
    assert (ws / f"{first}.txt").exists() and not (ws / f"{second}.txt").exists()
    # each child's tool lines, indented with its name
    assert err.count('  [general] [tool] bash {"command": "echo ') == 2
    assert "  [general] [tool ok]" in err and "  [general] [tool error] The user denied this call." in err
    assert err.count("  [general] [end; 2 step(s)") == 2
    # the children's tokens apart and in the total (scripted usage: 10 in per response)
    total = re.search(r"\[end; tokens in (\d+), out (\d+) \(subagents: in (\d+), out (\d+)\)", err)
    assert total is not None, err
    total_in, total_out, children_in, children_out = map(int, total.groups())
    assert (total_in, children_in) == (60, 40) and total_out > children_out > 0

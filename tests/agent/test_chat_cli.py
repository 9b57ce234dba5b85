"""`agent-ls chat` as a real process against the scripted LLM (one-shot, approval on stdin, resume)."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def chat(llm: ScriptedLLM, tmp: Path, ws: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update({
        "AGENT_LS_CONFIG_DIR": str(tmp / "config"),
        "AGENT_LS_DATA_DIR": str(tmp / "data"),
        "AGENT_LS_API_BASE": llm.openai_base,
        "OPENAI_API_KEY": "x",
    })
    return subprocess.run([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "--model",
                           "openai/scripted", *args], input=stdin, env=env, capture_output=True, text=True,
                          timeout=90)


def test_one_shot_with_tool_and_approval(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    (ws / "notes.txt").write_text("the answer is 42\n")
    llm.script(
        tool_calls([("read_file", {"path": "notes.txt"})]),
        tool_calls([("write_file", {"path": "out.txt", "content": "42"})]),
        text("Wrote the answer."),
    )
    proc = chat(llm, tmp_path, ws, "find", "the", "answer", stdin="o\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("Wrote the answer.")
    assert "[tool] read_file" in proc.stderr and "[approve] write_file" in proc.stderr
    assert (ws / "out.txt").read_text() == "42"


def test_denied_on_eof_and_resume(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    llm.script(tool_calls([("bash", {"command": "touch made.txt"})]), text("Could not run it."))
    proc = chat(llm, tmp_path, ws, "make", "a", "file")
    assert proc.returncode == 0, proc.stderr
    assert not (ws / "made.txt").exists()
    listing = chat(llm, tmp_path, ws, "--list-sessions")
    sid = listing.stdout.split()[0]
    llm.script(text("resumed"))
    again = chat(llm, tmp_path, ws, "--resume", sid, "hello again")
    assert again.returncode == 0 and "resumed" in again.stdout
    sent = llm.requests[-1].body["messages"]
    assert any(m.get("content") == "Could not run it." for m in sent)


def test_no_model_configured_says_what_to_set(ws: Path, tmp_path: Path) -> None:
    env = dict(os.environ)
    env.pop("AGENT_LS_MODEL", None)
    env.update({"AGENT_LS_CONFIG_DIR": str(tmp_path / "c"), "AGENT_LS_DATA_DIR": str(tmp_path / "d")})
    proc = subprocess.run([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "hi"], env=env,
                          capture_output=True, text=True, timeout=60, stdin=subprocess.DEVNULL)
    assert proc.returncode == 2 and "AGENT_LS_MODEL" in proc.stderr


def test_interactive_session_allowance_and_continue(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    llm.script(
        tool_calls([("write_file", {"path": "a.txt", "content": "A"})]),
        tool_calls([("write_file", {"path": "b.txt", "content": "B"})]),
        text("Both written."),
        text("Second answer."),
    )
    proc = chat(llm, tmp_path, ws, stdin="write two files\ns\nand another question\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("[approve] write_file") == 1  # "s" allowed it for the rest of the session
    assert (ws / "a.txt").read_text() == "A" and (ws / "b.txt").read_text() == "B"
    assert "Both written." in proc.stdout and "Second answer." in proc.stdout
    assert proc.stderr.count("[end;") == 2
    # --continue resumes the latest session
    llm.script(text("continued"))
    again = chat(llm, tmp_path, ws, "--continue", "one more")
    assert again.returncode == 0 and again.stdout.strip().endswith("continued")
    sent = [m.get("content") for m in llm.requests[-1].body["messages"]]
    assert "write two files" in sent and "and another question" in sent and sent[-1] == "one more"


def test_provider_error_exits_non_zero_with_the_message(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    from tests.llm.scripted_server import auth_error

    llm.script(auth_error())
    proc = chat(llm, tmp_path, ws, "hi")
    assert proc.returncode != 0
    assert "[error] the openai provider rejected the API key" in proc.stderr


def test_delete_session(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    llm.script(text("first"))
    assert chat(llm, tmp_path, ws, "hello").returncode == 0
    sid = chat(llm, tmp_path, ws, "--list-sessions").stdout.split()[0]
    gone = chat(llm, tmp_path, ws, "--delete-session", sid)
    assert gone.returncode == 0 and sid in gone.stdout
    assert chat(llm, tmp_path, ws, "--list-sessions").stdout.strip() == ""
    again = chat(llm, tmp_path, ws, "--delete-session", sid)
    assert again.returncode == 2 and "no session" in again.stderr


def test_settings_problems_are_printed_once_at_their_place(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Every problem of the settings files, with file, line and column (as `agent-ls mcp status`
    prints them), once each, a store smaller than a page included."""
    user = tmp_path / "config" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{\n  "permissions": {"alow": ["bash"]},\n'
                    '  "mcpServers": {"x": {"command": 7}},\n'
                    '  "agent": {"outputPageChars": 5000, "outputStoreChars": 2000}\n}\n')
    llm.script(text("ok"))
    proc = chat(llm, tmp_path, ws, "hi")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    typo = [ln for ln in lines if "alow" in ln]
    assert len(typo) == 1 and typo[0].startswith(f"{user}:2:"), proc.stderr
    server = [ln for ln in lines if "command" in ln and ln.startswith(f"{user}:3:")]
    assert len(server) == 1, proc.stderr  # a broken MCP server entry is shown too
    store = [ln for ln in lines if "must be at least agent.outputPageChars" in ln]
    assert len(store) == 1 and store[0].startswith(f"{user}:4:"), proc.stderr  # at its place too


def test_slash_compact_and_the_context_meter(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Issue 26: `/compact` in `agent-ls chat` compacts without asking the model for an answer
    (only for the summary), says what it kept, and each turn's line shows the context in use."""
    from tests.agent.test_context import agent_model, write_files

    write_files(ws, 2)
    llm.script(*(agent_model() for _ in range(10)))
    proc = chat(llm, tmp_path, ws, stdin="read f0\nread f1\n/compact\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    assert "% of context (" in proc.stderr and "of 32000 tokens, reported by the provider)" in proc.stderr
    assert "Compacted the conversation: 2 tool result(s) cleared" in proc.stderr
    assert "out-1" in proc.stderr and "out-2" in proc.stderr
    summaries = [r for r in llm.requests if r.body["messages"][0]["content"].startswith("You summarize")]
    assert len(summaries) == 1 and len(llm.requests) == 5  # 2 per prompt, 1 summary


def test_the_tool_progress_line_says_how_much_it_cut(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """The `[tool]` line shows 200 characters of the arguments, then `… [+N characters]`; a
    terminal escape in them stays escaped (it never reaches the terminal)."""
    path = "\x1b[2Jevil\u202e" + "a" * 300
    llm.script(tool_calls([("read_file", {"path": path})]), text("No such file."))
    proc = chat(llm, tmp_path, ws, "read", "it")
    assert proc.returncode == 0, proc.stderr
    [line] = [x for x in proc.stderr.splitlines() if x.startswith("[tool] ")]
    shown = '{"path": "\\u001b[2Jevil\\u202E' + "a" * 300 + '"}'
    assert line == f"[tool] read_file {shown[:200]}… [+{len(shown) - 200} characters]"
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr


def test_a_cut_never_splits_an_escape() -> None:
    from agent_ls.cli.chat import clip, tool_line

    assert clip("short", 10) == "short"
    assert clip("abcdefgh\x1bxyz", 10) == "abcdefgh… [+9 characters]"  # not "abcdefgh\\u"
    assert clip("ab\\\\cd", 3) == "ab… [+4 characters]"  # an escaped backslash stays whole
    assert tool_line("bash", {"command": "x" * 10}) == '[tool] bash {"command": "xxxxxxxxxx"}'


def test_the_plan_is_printed_when_it_changes_and_on_resume(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    first = [{"content": "Read \x1b[31mthe\x1b[0m code", "status": "in_progress"}, {"content": "Fix it", "status": "pending"}]
    second = [{"content": "Read \x1b[31mthe\x1b[0m code", "status": "completed"},
              {"content": "Fix it", "status": "in_progress"}]
    llm.script(tool_calls([("update_plan", {"steps": first})]), tool_calls([("update_plan", {"steps": second})]),
               text("Working."))
    proc = chat(llm, tmp_path, ws, "fix", "it")
    assert proc.returncode == 0, proc.stderr
    err = proc.stderr
    assert "\x1b" not in err  # the model's text cannot drive the terminal
    assert ("[plan] 0 of 2 done\n  [>] Read \\u001B[31mthe\\u001B[0m code\n  [ ] Fix it" in err)
    assert ("[plan] 1 of 2 done\n  [x] Read \\u001B[31mthe\\u001B[0m code\n  [>] Fix it" in err)
    assert "[tool] update_plan" not in err  # the checklist says it
    sid = chat(llm, tmp_path, ws, "--list-sessions").stdout.split()[0]
    llm.script(text("again"))
    again = chat(llm, tmp_path, ws, "--resume", sid, "go on")
    assert "[plan] 1 of 2 done" in again.stderr


def test_model_command_lists_picks_and_resume_keeps_it(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """``/model`` lists the settings' ``model`` and ``models``; ``/model NAME`` picks one for the
    next request, kept with the session (``--continue`` uses it); an unknown one is refused."""
    user = tmp_path / "config" / "settings.json"
    user.parent.mkdir(parents=True, exist_ok=True)
    user.write_text('{"model": "openai/scripted", "models": ["openai/scripted-other"]}')
    env = dict(os.environ)
    env.update({"AGENT_LS_CONFIG_DIR": str(tmp_path / "config"), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
                "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x"})
    env.pop("AGENT_LS_MODEL", None)

    def run(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), *args], input=stdin,
                              env=env, capture_output=True, text=True, timeout=90)

    llm.script(text("one"), text("two"))
    proc = run(stdin="first\n/model\n/model openai/gpt-9\n/model openai/scripted-other\nsecond\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    assert "* openai/scripted  (default)\n  openai/scripted-other\n(/model NAME picks one)" in proc.stdout
    assert "error: unknown model 'openai/gpt-9'" in proc.stdout
    assert "[model openai/scripted-other]" in proc.stdout
    assert [r.body["model"] for r in llm.requests] == ["scripted", "scripted-other"]
    llm.script(text("three"))
    again = run("--continue", stdin="/model\nthird\n/exit\n")
    assert again.returncode == 0, again.stderr
    assert "  openai/scripted  (default)\n* openai/scripted-other" in again.stdout
    assert "model openai/scripted-other]" in again.stderr  # the session line
    assert llm.requests[-1].body["model"] == "scripted-other"


def test_the_first_prompt_searches_waits_for_a_starting_server_and_uses_its_tool(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Issue 44 item 1 in `agent-ls chat`: the prompt goes at once while the knob server starts
    (``--start-gate``: it serves only once the test creates the file), tool_search is offered, the
    search shows its wait on the terminal, and the tool runs in the same turn once the server is up."""
    from tests.servers.launch import knob_stdio_params

    gate = tmp_path / "gate"
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({
        "mcpServers": {"knob": {**knob_stdio_params("--start-gate", gate), "connectTimeout": 120}}}))
    llm.script(
        tool_calls([("tool_search", {"query": "select:mcp__knob__add"})]),
        tool_calls([("mcp__knob__add", {"a": 2, "b": 3})]),
        text("It is 5."),
    )
    env = dict(os.environ)
    env.update({"AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
                "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x"})
    proc = subprocess.Popen([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "--model",
                             "openai/scripted", "add 2 and 3 with the add tool"], env=env, stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    err: list[str] = []
    try:
        assert proc.stderr is not None
        for line in proc.stderr:
            err.append(line)
            if line.startswith("[tool tool_search: waiting for the MCP server 'knob'"):
                gate.touch()  # the server starts only once the wait has been shown
        out = proc.stdout.read() if proc.stdout is not None else ""
        assert proc.wait(timeout=90) == 0, "".join(err)
    finally:
        proc.kill()
    stderr = "".join(err)
    assert gate.exists(), stderr
    assert "tool_search" in [t["function"]["name"] for t in llm.requests[0].body.get("tools") or []]
    assert "[tool ok] Loaded 1 tool(s)" in stderr and "[tool] mcp__knob__add" in stderr, stderr
    assert out.strip().endswith("It is 5.")
    assert llm.requests[2].body["messages"][-1]["content"].strip() == "5", llm.requests[2].body["messages"][-1]


def test_slash_rewind_lists_and_restores_what_a_turn_did(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Issue 40 in `agent-ls chat`: `/rewind` lists the session's checkpoints, `/rewind N both`
    shows what happens to each file, asks, and puts back what the turn's shell command changed
    and the conversation; `/redo` undoes it."""
    (ws / "old.txt").write_text("old\n")
    llm.script(tool_calls([("bash", {"command": "echo x > made.txt && rm old.txt"})]), text("done"))
    proc = chat(llm, tmp_path, ws, stdin="change it\no\n/rewind\n/rewind 1 both\ny\n/rewind\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    assert "  1  " in proc.stdout and "2 files changed  change it" in proc.stdout, proc.stdout
    assert "made.txt: delete" in proc.stderr and "old.txt" in proc.stderr, proc.stderr
    assert "[rewound: 2 files, the conversation; /redo undoes it]" in proc.stdout, proc.stdout
    assert (ws / "old.txt").read_text() == "old\n" and not (ws / "made.txt").exists()
    assert "no checkpoints in this session yet" in proc.stdout  # the rewound prompt's checkpoint is gone from the list


def test_slash_rename_names_the_session_in_every_list(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Issue 39: `/rename TITLE` names the session through the conversation service (the editor's
    `agent/sessions/rename`); `--list-sessions` shows the name; `/rename` alone clears it."""
    llm.script(text("hello"))
    proc = chat(llm, tmp_path, ws, stdin="hi there\n/rename   Retry   logic \n/exit\n")
    assert proc.returncode == 0, proc.stderr
    assert "[session named 'Retry logic']" in proc.stdout, proc.stdout
    listing = chat(llm, tmp_path, ws, "--list-sessions").stdout
    assert listing.rstrip().endswith("Retry logic"), listing
    sid = listing.split()[0]
    proc = chat(llm, tmp_path, ws, "--resume", sid, stdin="/rename\n/exit\n")
    assert "[session name cleared]" in proc.stdout, proc.stdout
    assert "Retry logic" not in chat(llm, tmp_path, ws, "--list-sessions").stdout


def test_slash_jobs_lists_and_slash_stop_stops_a_background_command(llm: ScriptedLLM, ws: Path,
                                                                     tmp_path: Path) -> None:
    """Issue 41 in `agent-ls chat`: the model starts a background command, `/jobs` lists it with
    its last line, `/stop 1` stops it, the end is printed, and the model hears of it at its next
    request; nothing is left when the chat ends."""
    from tests.lsp.test_jobs import unique_seconds, with_token

    sleep = f"sleep {unique_seconds('3555')}"  # the leftover check below scans the whole machine
    llm.script(tool_calls([("bash", {"command": f"echo ready on 4545; exec {sleep}", "run_in_background": True})]),
               text("started"), text("noted"))
    proc = chat(llm, tmp_path, ws, stdin="start it\no\n/jobs\n/stop 1\n/jobs\n/stop 9\nanything?\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert re.search(rf"bg-1  running +\d+s  echo ready on 4545; exec {sleep}", out), out
    assert re.search(r"bg-1  stopped \(SIGTERM\) +\d+s  echo ready", out), out
    assert "no background job bg-9 in this session (see /jobs)" in out
    assert "[background bg-1  stopped (SIGTERM)" in proc.stderr, proc.stderr
    told = "\n".join(str(m.get("content")) for m in llm.requests[-1].json["messages"])
    assert f"background command bg-1 (`echo ready on 4545; exec {sleep}`) was stopped (SIGTERM)" in told
    assert with_token(sleep) == []


def test_a_tool_with_an_app_shows_its_text_and_says_it_has_an_app(llm: ScriptedLLM, ws: Path,
                                                                    tmp_path: Path) -> None:
    """MCP Apps in `agent-ls chat`: a terminal cannot show an app; the text result and one line
    saying the tool has an app this client cannot show (tests/servers/apps_server.py)."""
    from tests.servers import apps_server

    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"mcpServers": {"apps": {
        "command": sys.executable, "args": [str(Path(apps_server.__file__))], "connectTimeout": 60}}}))
    llm.script(tool_calls([("mcp__apps__show_board", {"title": "q3"})]), text("Shown."))
    proc = chat(llm, tmp_path, ws, "show", "the", "board")
    assert proc.returncode == 0, proc.stderr
    assert "[tool ok] board for q3" in proc.stderr, proc.stderr
    assert ("[app] The tool 'show_board' of MCP server 'apps' has an interactive app (ui://apps/board.html) "
            "that this client cannot show") in proc.stderr, proc.stderr


def test_an_mcp_task_is_a_job_of_the_chat_and_slash_jobs_lists_it(llm: ScriptedLLM, ws: Path,
                                                                  tmp_path: Path) -> None:
    """An MCP task (the tasks extension) a turn of `agent-ls chat` starts returns at once as a job
    of the chat's session (the runtime host's task owner, wired by the chat), and `/jobs` lists it."""
    server = Path(__file__).resolve().parents[1] / "servers" / "tasks_server.py"
    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "settings.json").write_text(json.dumps({
        "mcpServers": {"tasks": {"command": sys.executable, "args": [str(server)]}},
        "permissions": {"allow": ["mcp__tasks__*"]}}))
    llm.script(tool_calls([("mcp__tasks__never", {}, "c1")]), text("started"))
    proc = chat(llm, tmp_path, ws, stdin="start the endless job\n/jobs\n/exit\n")
    assert proc.returncode == 0, proc.stderr
    result = [m for m in llm.requests[-1].json["messages"] if m.get("tool_call_id") == "c1"][0]["content"]
    assert "started as bg-1 and the turn goes on" in result, result
    assert re.search(r"bg-1  working +\d+s  tasks: never", proc.stdout), proc.stdout

"""Model-facing tool names: charset, length cap with a stable hash, deterministic collisions."""

from __future__ import annotations

import random
import re
import subprocess
import sys

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.core.naming import MAX_NAME, assign_names, could_name, sanitize, tool_name

VALID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")

names = st.text(min_size=0, max_size=100)
ascii_names = st.text(alphabet="abcXYZ019_-.:/ ", min_size=0, max_size=80)


def assert_valid(name: str) -> None:
    assert VALID.fullmatch(name), name
    assert len(name) <= MAX_NAME


# sanitize and tool_name ---------------------------------------------------


@pytest.mark.parametrize(
    ("part", "expected"),
    [
        ("github", "github"),
        ("create_issue", "create_issue"),
        ("get-file", "get-file"),
        ("ABC09", "ABC09"),
        ("a.b", "a_b"),
        ("a b", "a_b"),
        ("a/b:c", "a_b_c"),
        ("café", "caf_"),
        ("名前", "__"),
        ("😀", "_"),
        ("", "_"),
        ("٣", "_"),  # a non-ASCII digit is not in the providers' charset
    ],
)
def test_sanitize(part: str, expected: str) -> None:
    assert sanitize(part) == expected


def test_plain_names_are_unchanged() -> None:
    assert tool_name("github", "create_issue") == "mcp__github__create_issue"
    assert tool_name("my-server", "get-thing") == "mcp__my-server__get-thing"


def test_bad_characters_become_underscores() -> None:
    assert tool_name("my.server", "tool name") == "mcp__my_server__tool_name"
    assert tool_name("", "") == "mcp__e3b0c442___"  # the server segment is encoded (issue 25 item 7)
    assert tool_name("ünï", "çødé") == "mcp__n_e975a529____d_"


@pytest.mark.parametrize("server", ["github::ci", "github__ci", "_github", "github_", "a.:b", "", "__"])
def test_a_server_name_never_makes_the_mapping_ambiguous(server: str) -> None:
    """Issue 25 finding 7: the first ``__`` after ``mcp__`` always ends the server segment, so
    ``mcp__github__*`` cannot match a server ``github::ci``'s tools."""
    name = tool_name(server, "delete_repo")
    segment, _, tool = name.removeprefix("mcp__").partition("__")
    assert tool == "delete_repo" and "__" not in segment and not segment.startswith("_")
    assert not name.startswith("mcp__github__")
    assert_valid(name)


@given(st.text(min_size=0, max_size=30), st.text(alphabet="ab_", min_size=1, max_size=10))
@settings(max_examples=200)
def test_the_server_segment_is_unambiguous(server: str, tool: str) -> None:
    from agent_ls.core.naming import sanitize, server_segment

    name = tool_name(server, tool)
    if len(name) < MAX_NAME:
        assert name == f"mcp__{server_segment(server)}__{sanitize(tool)}"
        assert name.removeprefix("mcp__").partition("__")[0] == server_segment(server)


def test_exactly_64_characters_is_kept() -> None:
    server = "s"
    tool = "t" * (MAX_NAME - len("mcp__s__"))
    name = tool_name(server, tool)
    assert len(name) == MAX_NAME
    assert name == f"mcp__s__{tool}"


def test_long_names_get_a_stable_hash_suffix() -> None:
    tool = "t" * (MAX_NAME - len("mcp__s__") + 1)
    name = tool_name("s", tool)
    assert len(name) == MAX_NAME
    assert_valid(name)
    assert re.fullmatch(r"mcp__s__t+_[0-9a-f]{8}", name)
    assert tool_name("s", tool) == name


def test_long_names_that_share_a_prefix_stay_distinct() -> None:
    a = tool_name("server", "x" * 100 + "_one")
    b = tool_name("server", "x" * 100 + "_two")
    assert a != b
    assert a[:-9] == b[:-9]
    assert_valid(a)
    assert_valid(b)


def test_very_long_server_name() -> None:
    name = tool_name("s" * 500, "tool")
    assert_valid(name)
    assert name.startswith("mcp__sss")


def test_hash_is_stable_across_processes() -> None:
    # no use of hash(): PYTHONHASHSEED must not matter
    code = "from agent_ls.core.naming import tool_name; print(tool_name('s' * 40, 'é' * 40))"
    outs = {
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                       env={"PYTHONHASHSEED": seed}).stdout.strip()
        for seed in ("1", "2")
    }
    assert outs == {tool_name("s" * 40, "é" * 40)}


@given(server=names, tool=names)
@settings(max_examples=300, deadline=None)
def test_tool_name_is_always_valid_and_stable(server: str, tool: str) -> None:
    name = tool_name(server, tool)
    assert_valid(name)
    assert name.startswith("mcp__")
    assert tool_name(server, tool) == name


# assign_names ------------------------------------------------------------


def test_no_collisions_means_plain_names() -> None:
    pairs = [("github", "create_issue"), ("github", "list_issues"), ("fs", "read_file")]
    assert assign_names(pairs) == {p: tool_name(*p) for p in pairs}


def test_server_collision() -> None:
    out = assign_names([("a.b", "t"), ("a_b", "t")])
    assert len(set(out.values())) == 2
    assert all(VALID.fullmatch(v) for v in out.values())
    # exactly one keeps the plain name, the other gets the hash suffix
    assert sorted(out.values())[0] == "mcp__a_b__t"
    assert re.fullmatch(r"mcp__a_b__t_[0-9a-f]{8}", sorted(out.values())[1])


def test_tool_collision() -> None:
    out = assign_names([("s", "x.y"), ("s", "x_y"), ("s", "x y"), ("s", "x/y")])
    assert len(set(out.values())) == 4
    assert "mcp__s__x_y" in out.values()
    for v in out.values():
        assert_valid(v)


def test_separator_collision() -> None:
    # "a__b" + "c" and "a" + "b__c" give the same joined name
    out = assign_names([("a__b", "c"), ("a", "b__c")])
    assert len(set(out.values())) == 2


def test_collision_resolution_is_deterministic_and_order_independent() -> None:
    pairs = [("a.b", "t"), ("a_b", "t"), ("a b", "t"), ("s", "x.y"), ("s", "x_y"), ("z", "ü"), ("z", "ö"),
             ("z", "_")]
    expected = assign_names(pairs)
    rng = random.Random(1234)
    for _ in range(20):
        shuffled = pairs[:]
        rng.shuffle(shuffled)
        assert assign_names(shuffled) == expected
    assert assign_names(reversed(pairs)) == expected
    assert assign_names(iter(pairs)) == expected


def test_duplicates_in_the_input_are_harmless() -> None:
    out = assign_names([("s", "t"), ("s", "t"), ("s", "u")])
    assert out == {("s", "t"): "mcp__s__t", ("s", "u"): "mcp__s__u"}


def test_unicode_and_empty_names() -> None:
    pairs = [("", ""), ("", "tool"), ("é", "tool"), ("ü", "tool"), ("服务", "工具"), ("s", ""), ("s", "😀")]
    out = assign_names(pairs)
    assert set(out) == set(pairs)
    assert len(set(out.values())) == len(pairs)
    for v in out.values():
        assert_valid(v)


def test_long_colliding_names() -> None:
    base = "x" * 80
    pairs = [("srv", base + "."), ("srv", base + "_"), ("srv", base + " ")]
    out = assign_names(pairs)
    assert len(set(out.values())) == 3
    for v in out.values():
        assert_valid(v)


def test_hash_collision_fallback(monkeypatch: pytest.MonkeyPatch) -> None:
    # force every digest to be equal: names must still be unique
    import agent_ls.core.naming as naming

    real = naming._digest
    monkeypatch.setattr(naming, "_digest", lambda server, tool: "0" * 8 if "#" not in tool else real(server, tool))
    out = assign_names([("s", "a.b"), ("s", "a_b"), ("s", "a b"), ("s", "a:b")])
    assert len(set(out.values())) == 4
    for v in out.values():
        assert_valid(v)


def test_empty_input() -> None:
    assert assign_names([]) == {}


def test_adding_an_unrelated_tool_does_not_rename_others() -> None:
    before = assign_names([("s", "a.b"), ("s", "a_b")])
    after = assign_names([("s", "a.b"), ("s", "a_b"), ("t", "other")])
    assert {k: after[k] for k in before} == before


@given(pairs=st.lists(st.tuples(ascii_names, ascii_names), max_size=30))
@settings(max_examples=200, deadline=None)
def test_assign_names_properties(pairs: list[tuple[str, str]]) -> None:
    out = assign_names(pairs)
    assert set(out) == set(pairs)
    assert len(set(out.values())) == len(out)  # unique
    for v in out.values():
        assert_valid(v)
    assert assign_names(list(reversed(pairs))) == out
    assert assign_names(sorted(pairs)) == out


@given(pairs=st.lists(st.tuples(names, names), max_size=15))
@settings(max_examples=150, deadline=None)
def test_assign_names_properties_unicode(pairs: list[tuple[str, str]]) -> None:
    out = assign_names(pairs)
    assert len(set(out.values())) == len(out)
    for v in out.values():
        assert_valid(v)
    assert assign_names(list(reversed(pairs))) == out


@given(pairs=st.lists(st.tuples(ascii_names, ascii_names), min_size=1, max_size=20, unique=True))
@settings(max_examples=100, deadline=None)
def test_names_without_collisions_are_the_plain_names(pairs: list[tuple[str, str]]) -> None:
    out = assign_names(pairs)
    plain = [tool_name(*p) for p in pairs]
    if len(set(plain)) == len(plain):
        assert out == dict(zip(pairs, plain, strict=True))


@pytest.mark.parametrize("server", ["k", "github::ci", "s" * 70, "a-server-with-a-rather-long-name-of-fifty-one-chars"])
def test_could_name_knows_every_name_of_a_server_s_tools(server: str) -> None:
    """What a call of a tool not known yet waits for (the registry's resolve): the starting
    server whose tools could have that name, also when the name was cut with a hash suffix."""
    tools = ["echo", "t" * 80, "x::y"]
    names = assign_names([(server, t) for t in tools] + [("other", "echo")])
    for t in tools:
        assert could_name(server, names[(server, t)])
    assert not could_name(server, names[("other", "echo")])
    assert not could_name(server, "mcp__typo__echo")
    assert not could_name("github", tool_name("github::ci", "delete_repo"))  # the encoded segment is another server's


@given(st.lists(st.tuples(ascii_names, ascii_names), min_size=1, max_size=8))
@settings(max_examples=200, deadline=None)
def test_every_assigned_name_could_be_its_server_s(pairs: list[tuple[str, str]]) -> None:
    for (server, _tool), name in assign_names(pairs).items():
        assert could_name(server, name)

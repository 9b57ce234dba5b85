"""The fallbacks: Landlock when user namespaces are refused (forced here with
AGENT_LS_SANDBOX_MECHANISM), nothing at all (a clear error, never an unconfined run), the macOS
profile text, bad network rules, and the probe started early (detect_soon)."""

from __future__ import annotations

import sys
import threading

import pytest

from agent_ls.core.sandbox import (
    Mechanism,
    NetworkPolicy,
    NetworkRuleError,
    Sandbox,
    SandboxPolicy,
    SandboxUnavailable,
    landlock,
)
from agent_ls.core.sandbox.runner import FORCE_VARIABLE, detect
from agent_ls.core.sandbox.seatbelt import seatbelt_profile
from tests.sandbox.conftest import CANARY, Place, run_wrapped


def _policy(place: Place, network: NetworkPolicy | None = None) -> SandboxPolicy:
    return SandboxPolicy.build([str(place.ws)], deny_read=[str(place.home / ".ssh")], temp_dir=str(place.tmp),
                               network=network or NetworkPolicy.off())


@pytest.mark.skipif(landlock.abi_version() < landlock.MIN_ABI, reason="no Landlock ABI 4 in this kernel")
async def test_landlock_confines_reads_writes_and_tcp(place: Place, http_port: int,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORCE_VARIABLE, "landlock")
    assert detect().mechanism is Mechanism.LANDLOCK
    sandbox = Sandbox(_policy(place))
    code, out = await run_wrapped(sandbox, (
        f'cat ~/.ssh/id_ed25519; touch {place.outside}/x; echo "outside:$?"; touch ok; echo "ws:$?"; '
        f'{sys.executable} -c "import socket; socket.create_connection((\'127.0.0.1\', {http_port}), 3)" '
        '2>&1 | tail -1; echo LD=$LD_PRELOAD'), place, LD_PRELOAD="")
    assert CANARY not in out and "Permission denied" in out
    assert "outside:1" in out and "ws:0" in out, out
    assert "PermissionError" in out  # TCP connect to anything but the proxy
    assert not list(place.outside.iterdir())


async def test_without_any_mechanism_nothing_runs_and_the_reason_is_said(place: Place,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORCE_VARIABLE, "none")
    sandbox = Sandbox(_policy(place))
    assert not sandbox.availability.available
    with pytest.raises(SandboxUnavailable, match="no OS sandbox is available"):
        await sandbox.wrap_shell("touch pwned", cwd=str(place.ws))
    assert not (place.ws / "pwned").exists()


def test_the_macos_profile_denies_after_it_allows(place: Place) -> None:
    text = seatbelt_profile(_policy(place, NetworkPolicy.parse("ask")), proxy_port=40123)
    lines = text.splitlines()
    assert lines[:2] == ["(version 1)", "(deny default)"]
    ws = lines.index(f'(allow file-write* (subpath "{place.ws}"))')
    claude = lines.index(f'(deny file-write* (subpath "{place.ws}/.claude"))')  # missing, still denied
    ssh = lines.index(f'(deny file-read* file-write* (subpath "{place.home}/.ssh"))')
    assert ws < claude and ws < ssh
    assert '(allow network-outbound (remote tcp "localhost:40123"))' in lines
    off = seatbelt_profile(_policy(place), proxy_port=None)
    assert "network-outbound" not in off
    assert seatbelt_profile(SandboxPolicy.build(['/w "x"']), proxy_port=None).count('\\"x\\"') >= 1


@pytest.mark.parametrize("rule, message", [
    ("sometimes", "must be \"off\", \"ask\""),
    ({"allow": "pypi.org"}, "must be a list"),
    ({"allow": ["https://pypi.org"]}, "not a host name pattern"),
    ({"allow": ["pypi.org"], "deny": []}, "unknown key"),
    ({"allow": [""]}, "non-empty"),
])
def test_a_malformed_network_rule_says_what_is_wrong(rule: object, message: str) -> None:
    with pytest.raises(NetworkRuleError, match=message):
        NetworkPolicy.parse(rule)


def test_a_workspace_only_narrows_the_network() -> None:
    user = NetworkPolicy.parse({"allow": ["pypi.org", "*.npmjs.org"]})
    assert user.narrowed_by(NetworkPolicy.parse("off")).is_off
    assert user.narrowed_by(NetworkPolicy.parse("ask")) == user  # asking is not more than an allow list
    narrowed = user.narrowed_by(NetworkPolicy.parse({"allow": ["pypi.org", "evil.example"]}))
    assert narrowed.decide("pypi.org") == "allow"
    assert narrowed.decide("evil.example") == "deny"
    assert narrowed.decide("registry.npmjs.org") == "deny"
    asking = NetworkPolicy.parse("ask").narrowed_by(NetworkPolicy.parse({"allow": ["pypi.org"]}))
    assert asking.decide("pypi.org") == "ask" and asking.decide("evil.example") == "deny"
    assert NetworkPolicy.parse("off").narrowed_by(NetworkPolicy.parse({"allow": ["*"]})).is_off


def test_detect_soon_probes_once_and_detect_waits_for_it(monkeypatch: pytest.MonkeyPatch) -> None:
    """`agent-ls acp` starts the probe at its start (issue 46): a `detect()` while that probe runs
    waits for its answer instead of probing a second time."""
    from agent_ls.core.sandbox import runner

    started, release = threading.Event(), threading.Event()
    probes: list[str] = []

    def slow_probe(path: str) -> str | None:
        probes.append(path)
        started.set()
        release.wait(10)
        return "no namespaces in this test"

    monkeypatch.setattr(runner, "_probe_bwrap", slow_probe)
    monkeypatch.setattr(runner.shutil, "which", lambda name: f"/usr/bin/{name}")
    monkeypatch.setattr(runner.landlock, "abi_version", lambda: 0)
    monkeypatch.setenv(FORCE_VARIABLE, "bubblewrap")
    runner._detect.cache_clear()
    try:
        runner.detect_soon()
        assert started.wait(10)
        threading.Timer(0.2, release.set).start()
        found = detect()
        assert probes == ["/usr/bin/bwrap"], "a second probe ran"
        assert found.mechanism is Mechanism.NONE and "no namespaces in this test" in found.detail
    finally:
        release.set()
        runner._detect.cache_clear()

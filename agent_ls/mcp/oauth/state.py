"""How a server's sign-in stands and how it fails: :class:`AuthState`, the sign-in errors,
and the messages status and errors show for them (never a token)."""

from __future__ import annotations

import enum

import httpx2
from mcp.client.auth import OAuthFlowError, OAuthRegistrationError, OAuthTokenError

from agent_ls.core.redact import redact_live

REJECTED_CLIENT_ERRORS = ("invalid_client", "unauthorized_client")
"""Token endpoint errors that mean the stored client registration is no longer accepted."""


class AuthState(enum.StrEnum):
    NEEDS_SIGN_IN = "needs-sign-in"
    SIGNING_IN = "signing-in"
    SIGNED_IN = "signed-in"
    FAILED = "failed"


class SignInError(Exception):
    """Signing in to a server did not work (the message says why, without secrets)."""


class SignInTimeout(SignInError):
    """Nobody completed the authorization page in time."""


class SignInDenied(SignInError):
    """The authorization server redirected back with an error (the user said no, ...)."""


class RegistrationRejected(SignInError):
    """The authorization server rejected the stored client registration; it was dropped."""


def describe_auth_error(exc: BaseException) -> str:
    """A message for status and errors: what failed, never a token."""
    if isinstance(exc, SignInError):
        msg = str(exc)
    elif isinstance(exc, OAuthRegistrationError):
        msg = f"client registration failed: {exc}"
    elif isinstance(exc, OAuthTokenError):
        msg = f"token request failed: {exc}"
    elif isinstance(exc, OAuthFlowError):
        msg = f"authorization failed: {exc}"
    elif isinstance(exc, httpx2.HTTPError):
        msg = f"cannot reach the authorization server: {type(exc).__name__}: {exc}"
    else:
        msg = f"authorization failed: {type(exc).__name__}: {exc}"
    return redact_live(msg)


def is_auth_error(exc: BaseException) -> bool:
    return isinstance(exc, (SignInError, OAuthFlowError))


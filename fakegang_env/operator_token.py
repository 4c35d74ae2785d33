"""The adaptive operator's state between rounds, as an opaque token only the server can read.

The debrief of round k carries a token holding the operator's state for round k+1; the reset of
round k+1 sends it back. The client keeps it (in its checkpoints), so replay, resume and fork need
nothing from the server but its key, and a fork that takes down other members gets another token:
a new branch of the operator. The token is encrypted and authenticated with AES-GCM-SIV
(`cryptography`), so a client can neither read the next playbook before the round nor edit it.
The nonce is derived from the plaintext (a synthetic IV, the misuse-resistant use GCM-SIV is made
for), so the same state always gives the same token: a resumed or replayed run sends exactly the
bytes the original run sent.

The key is 32 random bytes in a file (`$FAKEGANG_OPERATOR_KEY_FILE`, by default under
`~/.cache/fakegang/`), created on first use with mode 0600, so tokens survive a server restart and
every server of one machine (the embedded ones of worker processes too) reads the same key.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
import os
import secrets
import zlib
from pathlib import Path

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCMSIV

from fakegang_env.operator import OperatorState

__all__ = [
    "KEY_FILE_ENV",
    "MAX_TOKEN_LENGTH",
    "TOKEN_PATTERN",
    "OperatorTokenError",
    "key_path",
    "open_token",
    "seal",
    "server_key",
]

KEY_FILE_ENV = "FAKEGANG_OPERATOR_KEY_FILE"
DEFAULT_KEY_FILE = Path.home() / ".cache" / "fakegang" / "operator.key"
PREFIX = "op1."
MAX_TOKEN_LENGTH = 4096
#: What a token looks like (the request schema declares it): the prefix, then base64url.
TOKEN_PATTERN = r"^op1\.[A-Za-z0-9_-]+$"
_AAD = b"fakegang operator state v1"
_NONCE = 12
_KEY_BYTES = 32


class OperatorTokenError(ValueError):
    """A token that cannot be used: `status` 403 (it does not verify: edited, forged, another
    server's) or 409 (a genuine token of another round, campaign or task)."""

    def __init__(self, status: int, error: str, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.error = error
        self.message = message


def key_path() -> Path:
    return Path(os.environ.get(KEY_FILE_ENV) or DEFAULT_KEY_FILE).expanduser()


def server_key(path: Path | None = None) -> bytes:
    """The server's key, created (0600, atomically: the first writer wins) if missing."""
    path = path or key_path()
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        tmp.write_text(secrets.token_hex(_KEY_BYTES) + "\n")
        tmp.chmod(0o600)
        try:
            os.link(tmp, path)  # fails if another process created it first: keep theirs
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    try:
        key = bytes.fromhex(path.read_text().strip())
    except ValueError:
        key = b""
    if len(key) != _KEY_BYTES:
        raise ValueError(
            f"{path}: not an operator key (64 hex digits); delete it to make a new one"
        )
    return key


def seal(state: OperatorState, key: bytes) -> str:
    """The token carrying `state` (the same state and key always give the same token)."""
    plain = zlib.compress(json.dumps(state.to_dict(), sort_keys=True).encode(), 9)
    nonce = hmac.new(key, plain, hashlib.sha256).digest()[:_NONCE]
    sealed = nonce + AESGCMSIV(key).encrypt(nonce, plain, _AAD)
    return PREFIX + base64.urlsafe_b64encode(sealed).decode().rstrip("=")


def _invalid(why: str) -> OperatorTokenError:
    return OperatorTokenError(403, "invalid_operator_token", f"operator_token {why}")


def open_token(token: str, key: bytes, *, task: str, campaign: int, round: int) -> OperatorState:
    """The state in `token`, checked to be the one for (task, campaign, round)."""
    if not isinstance(token, str) or not token.startswith(PREFIX):
        raise _invalid(f"must be the opaque '{PREFIX}...' string from the previous round's debrief")
    if len(token) > MAX_TOKEN_LENGTH:
        raise _invalid(f"is longer than {MAX_TOKEN_LENGTH} characters")
    body = token[len(PREFIX) :]
    try:
        raw = base64.urlsafe_b64decode(body + "=" * (-len(body) % 4))
    except (binascii.Error, ValueError):
        raise _invalid("is not base64url") from None
    if len(raw) <= _NONCE:
        raise _invalid("is too short")
    try:
        plain = AESGCMSIV(key).decrypt(raw[:_NONCE], raw[_NONCE:], _AAD)
        state = OperatorState.from_dict(json.loads(zlib.decompress(plain)))
    except InvalidTag:
        raise _invalid(
            "does not verify: it was edited, forged, or issued by a server with another key"
        ) from None
    except (ValueError, zlib.error):
        raise _invalid("holds no operator state") from None
    if (state.task, state.campaign, state.round) != (task, campaign, round):
        raise OperatorTokenError(
            409,
            "stale_operator_token",
            f"operator_token is for round {state.round} of {state.task} campaign "
            f"{state.campaign}, not round {round} of {task} campaign {campaign}: send the token "
            "from the debrief of the round before this one",
        )
    return state

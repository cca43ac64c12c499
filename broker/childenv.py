"""The environment of a child program Helm starts (an MCP stdio server, a coding agent).

A child gets only ``SAFE_VARIABLES`` from Helm's environment (plus every ``LC_*`` locale
variable), the certificate and proxy settings of ``NETWORK_VARIABLES`` (without them a server that
works in the user's shell fails in Helm behind a TLS-inspecting proxy), the further names its
profile passes (``pass_env``), and the one secret variable its profile names. That secret
variable may not be a name that changes how programs load or run (``LD_PRELOAD``, ``PATH``,
``PYTHONPATH``, ``NODE_OPTIONS``…): a stored profile must not be a way to inject code into the
child.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

SAFE_VARIABLES = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR")
"""Variables a child inherits from Helm (plus every ``LC_*`` locale variable): enough to find
programs, a home folder, the user's name, language and time zone; nothing that carries
credentials, proxies or loader settings."""

NETWORK_VARIABLES = (
    "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "NODE_EXTRA_CA_CERTS",
    "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY",
    "http_proxy", "https_proxy", "all_proxy", "no_proxy",
)  # fmt: skip
"""Certificate and proxy variables a child inherits as they are: the trust store and the way out
the user set up for every program. A proxy URL may carry the user's proxy login; the child gets
what any program the user starts gets."""

_SECRET_WORDS = re.compile(r"TOKEN|SECRET|PASSW|PASSPHRASE|CREDENTIAL|KEY|PRIVATE|AUTH|COOKIE|SESSION")

_ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")

# Exact names (compared upper-case) that change how a program, shell, loader or runtime
# behaves, or that Helm already sets from its own environment.
_UNSAFE_NAMES = frozenset(
    {
        "ENV", "BASH_ENV", "SHELLOPTS", "BASHOPTS", "PS4", "IFS", "CDPATH", "GLOBIGNORE",
        "SHELL", "PROMPT_COMMAND", "CLASSPATH", "JAVA_TOOL_OPTIONS", "_JAVA_OPTIONS",
        "JDK_JAVA_OPTIONS", "GCONV_PATH", "LOCPATH", "NLSPATH", "HOSTALIASES", "LOCALDOMAIN",
        "GLIBC_TUNABLES", "SSL_CERT_FILE", "SSL_CERT_DIR", "REQUESTS_CA_BUNDLE",
        "CURL_CA_BUNDLE", "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "TERM",
        "EDITOR", "VISUAL", "PAGER", "BROWSER", "XDG_CONFIG_HOME", "XDG_DATA_HOME",
        "XDG_RUNTIME_DIR", "DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS",
        "SSH_AUTH_SOCK", "GNUPGHOME", "LUA_PATH", "LUA_CPATH", "TCLLIBPATH",
    }
)  # fmt: skip
# Prefixes (compared upper-case): dynamic loaders, language runtimes, package managers, VCS.
_UNSAFE_PREFIXES = (
    "LD_", "DYLD_", "PYTHON", "NODE_", "NPM_CONFIG", "PERL", "RUBY", "GEM_", "BUNDLE_",
    "JAVA", "DENO_", "BUN_", "UV_", "PIP_", "GIT_", "MALLOC_", "LC_", "RESOLV_", "HELM_",
    "COMSPEC", "PSMODULEPATH", "PATHEXT",
)  # fmt: skip


def env_name_problem(name: str) -> str | None:
    """Why ``name`` cannot receive a secret, or None when it can."""
    if not _ENV_NAME.match(name):
        return "must be letters, digits and '_' (up to 64), not starting with a digit"
    upper = name.upper()
    if upper in SAFE_VARIABLES or upper in _UNSAFE_NAMES or upper.startswith(_UNSAFE_PREFIXES):
        return "changes how programs load or run (or is set by Helm); choose a name such as MY_SERVER_TOKEN"
    return None


def pass_env_problem(name: str) -> str | None:
    """Why a profile may not pass ``name`` from Helm's environment to its child, or None.

    Names that change how programs load or run are refused as for a secret variable, and so
    are names that look like a secret: a secret belongs in the credential store, where Helm
    knows it and redacts it from every answer (``--token-env``)."""
    if not _ENV_NAME.match(name):
        return "must be letters, digits and '_' (up to 64), not starting with a digit"
    upper = name.upper()
    if upper in SAFE_VARIABLES or name in NETWORK_VARIABLES:
        return "is passed to every child already"
    if upper in _UNSAFE_NAMES or upper.startswith(_UNSAFE_PREFIXES):
        return "changes how programs load or run, so Helm does not pass it"
    if _SECRET_WORDS.search(upper):
        return "looks like a secret: keep it in the credential store and name it as the token variable"
    return None


def safe_environment(source: Mapping[str, str] | None = None, passed: tuple[str, ...] = ()) -> dict[str, str]:
    """The variables a child inherits: ``SAFE_VARIABLES``, ``LC_*``, ``NETWORK_VARIABLES`` and the
    profile's ``passed`` names (each already checked by ``pass_env_problem``), nothing else."""
    env = os.environ if source is None else source
    return {
        k: v
        for k, v in env.items()
        if k in SAFE_VARIABLES or k.startswith("LC_") or k in NETWORK_VARIABLES or k in passed
    }


def command_problem(command: object) -> str | None:
    """Why ``command`` (a stored argv list) cannot be started, or None when it can."""
    if (
        not isinstance(command, list)
        or not command
        or not all(isinstance(a, str) for a in command)
        or not command[0]
        or any("\0" in a for a in command)
    ):
        return "command must be a non-empty list of arguments"
    return None


def child_environment(secret_env: str | None, secret: str | None) -> dict[str, str]:
    """The safe environment plus the one secret variable (when the profile has one)."""
    env = safe_environment()
    if secret_env is not None and secret is not None:
        env[secret_env] = secret
    return env

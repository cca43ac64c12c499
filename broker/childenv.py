"""The environment of a child program Helm starts (an MCP stdio server, a coding agent).

A child gets only ``SAFE_VARIABLES`` from Helm's environment (plus every ``LC_*`` locale
variable) and the one secret variable its profile names. That secret variable may not be a
name that changes how programs load or run (``LD_PRELOAD``, ``PATH``, ``PYTHONPATH``,
``NODE_OPTIONS``…): a stored profile must not be a way to inject code into the child.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping

SAFE_VARIABLES = ("PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR")
"""Variables a child inherits from Helm (plus every ``LC_*`` locale variable): enough to find
programs, a home folder, the user's name, language and time zone; nothing that carries
credentials, proxies or loader settings."""

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


def safe_environment(source: Mapping[str, str] | None = None) -> dict[str, str]:
    """The variables a child inherits: ``SAFE_VARIABLES`` and ``LC_*``, nothing else."""
    env = os.environ if source is None else source
    return {k: v for k, v in env.items() if k in SAFE_VARIABLES or k.startswith("LC_")}


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

"""The one rule for names the user gives Helm: profiles, workspaces, projects and agents.

A name is 1 to 64 letters, digits, ``_``, ``.`` and ``-``, starting with a letter or digit, so
it is safe as a settings key, a credential-store key segment and a command-line argument. The
manifest schema's ``profileName`` says the same for extension authors (a test keeps them equal).
"""

from __future__ import annotations

import re

NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")
NAME_RULE = "use letters, digits, '_', '.', '-' (up to 64, starting with a letter or digit)"


def valid_name(name: object) -> bool:
    return isinstance(name, str) and NAME.match(name) is not None

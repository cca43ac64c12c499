"""Start the desktop app (Qt is imported only from here on)."""

from __future__ import annotations

import argparse
import sys


def main(args: argparse.Namespace) -> int:
    print("helm: the desktop app is not available in this build", file=sys.stderr)
    return 1

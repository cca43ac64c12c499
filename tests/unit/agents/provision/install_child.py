"""A separate process that installs ``echo`` one tarball at a time, for the kill-mid-install test.

Usage: python -m tests.unit.agents.provision.install_child HOME CATALOGUE_FOLDER REGISTRY_URL
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

from broker.agents import provision
from broker.agents.provision import CatalogueSource, InstallLimits, Options


def main() -> None:
    home, folder, url = Path(sys.argv[1]), Path(sys.argv[2]), sys.argv[3]
    source = CatalogueSource(
        folder / "catalogue.json", folder / "catalogue.sig", (folder / "catalogue.pub").read_bytes()
    )
    asyncio.run(provision.add(home, "echo", Options(source, url, InstallLimits(parallel=1))))


if __name__ == "__main__":
    main()

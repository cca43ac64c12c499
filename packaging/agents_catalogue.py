"""The release step for Helm's catalogue of agent adapters: resolve, sign, and make a key.

    .venv/bin/python packaging/agents_catalogue.py resolve            # catalogue.in.json -> catalogue.json
    .venv/bin/python packaging/agents_catalogue.py sign --key-file -  # the private key on stdin
    .venv/bin/python packaging/agents_catalogue.py keygen --private-out PATH

The private key is read from a file or standard input, never from the command line, and never
lives in the repository: only its public half (resources/agents/catalogue.pub) does.
packaging/README.md ("Signing the agent catalogue") describes the whole step.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from broker import signatures
from broker.agents.provision.errors import CatalogueError, SignatureError
from broker.agents.provision.registry import DEFAULT_REGISTRY
from broker.agents.provision.release import build_catalogue, catalogue_entry
from broker.agents.provision.signing import key_id, public_key, public_pem, sign, verify_signature

FOLDER = Path(__file__).resolve().parent.parent / "resources" / "agents"


def resolve(args: argparse.Namespace) -> int:
    sources = json.loads(Path(args.input).read_text(encoding="utf-8"))["adapters"]
    entries = {}
    for name, source in sources.items():
        lock = npm_lock(f"{source['package']}@{source['version']}", args.registry)
        entries[name], warnings = catalogue_entry(source, lock)
        for warning in warnings:
            print(f"warning: {name}: {warning}", file=sys.stderr)
        pinned = len(entries[name]["tree"])
        print(f"{name}: {source['package']}@{source['version']}, {pinned} tarballs pinned")
    Path(args.output).write_bytes(build_catalogue(entries))
    print(f"wrote {args.output}; now sign it (sign --key-file)")
    return 0


def npm_lock(spec: str, registry: str) -> dict[str, object]:
    """npm's resolution of ``spec``: metadata only, no tarball fetched, no script run."""
    with tempfile.TemporaryDirectory(prefix="helm-resolve-") as folder:
        (Path(folder) / "package.json").write_text('{"name": "helm-adapter-resolve", "private": true}\n')
        command = ["npm", "install", "--package-lock-only", "--ignore-scripts", "--no-audit", "--no-fund"]
        subprocess.run([*command, "--registry", registry, spec], cwd=folder, check=True, timeout=600)
        lock: dict[str, object] = json.loads((Path(folder) / "package-lock.json").read_text(encoding="utf-8"))
        return lock


def sign_catalogue(args: argparse.Namespace) -> int:
    key = read_private_key(args.key_file)
    catalogue = Path(args.catalogue)
    data = catalogue.read_bytes()
    signature = sign(data, key)
    trusted = public_key(Path(args.public_key).read_bytes())
    verify_signature(data, signature, trusted)  # the shipped public key must be this key's half
    catalogue.with_suffix(".sig").write_bytes(signature)
    print(f"signed {catalogue} with key {key_id(key.public_key())}")
    return 0


def read_private_key(path: str) -> Ed25519PrivateKey:
    pem = sys.stdin.buffer.read() if path == "-" else Path(path).read_bytes()
    try:
        return signatures.private_key(pem)
    except signatures.BadSignature as bad:
        raise SystemExit(f"agents_catalogue: the key is {bad.detail}") from None


def keygen(args: argparse.Namespace) -> int:
    key = Ed25519PrivateKey.generate()
    fd = os.open(args.private_out, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "wb") as fh:
        fh.write(signatures.private_pem(key))
    Path(args.public_out).write_bytes(public_pem(key.public_key()))
    print(f"key {key_id(key.public_key())}: private half in {args.private_out}, public in {args.public_out}")
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="agents_catalogue.py", description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="command", required=True)
    r = sub.add_parser("resolve", help="pin every tarball of each adapter's tree with npm's resolution")
    r.add_argument("--input", default=str(FOLDER / "catalogue.in.json"))
    r.add_argument("--output", default=str(FOLDER / "catalogue.json"))
    r.add_argument("--registry", default=DEFAULT_REGISTRY)
    r.set_defaults(run=resolve)
    s = sub.add_parser("sign", help="sign the catalogue (writes catalogue.sig beside it)")
    s.add_argument("--key-file", required=True, help="the PEM private key's file, or - for stdin")
    s.add_argument("--catalogue", default=str(FOLDER / "catalogue.json"))
    s.add_argument("--public-key", default=str(FOLDER / "catalogue.pub"), help="the key Helm ships")
    s.set_defaults(run=sign_catalogue)
    k = sub.add_parser("keygen", help="make a new signing key (rotating it ships a new catalogue.pub)")
    k.add_argument("--private-out", required=True, help="created new, mode 0600; keep it off the repository")
    k.add_argument("--public-out", default=str(FOLDER / "catalogue.pub"))
    k.set_defaults(run=keygen)
    return p


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    try:
        code: int = args.run(args)
    except (CatalogueError, SignatureError) as exc:
        print(f"agents_catalogue: {exc}", file=sys.stderr)
        return 1
    return code


if __name__ == "__main__":
    sys.exit(main())

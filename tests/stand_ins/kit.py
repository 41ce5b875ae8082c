"""Build bundle trees for tests (the raw layout of ARCHITECTURE.md, format version 1)."""
from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from forensics.bundle.write import new_manifest


def make_tree(root: Path, hosts: dict[str, dict], kind: str = "node") -> Path:
    """hosts: {host: {"info": {...host.json extras}, "raw": {"<source>/<name>": bytes}, "commands": [entries]}}."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "manifest.json").write_bytes(new_manifest(list(hosts), kind))
    for host, spec in hosts.items():
        hdir = root / "hosts" / host
        hdir.mkdir(parents=True, exist_ok=True)
        info = {"host": host, "hostname": host, "timezone": "UTC"}
        info.update(spec.get("info", {}))
        (hdir / "host.json").write_text(json.dumps(info, indent=1))
        cmds = list(spec.get("commands", []))
        for rel, data in spec.get("raw", {}).items():
            p = hdir / "raw" / rel
            p.parent.mkdir(parents=True, exist_ok=True)
            p.write_bytes(data)
        (hdir / "commands.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cmds))
    return root


def iso(t: dt.datetime | None) -> str | None:
    return None if t is None else t.astimezone(dt.timezone.utc).isoformat()

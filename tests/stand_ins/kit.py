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


STANDIN = Path(__file__).with_name("standin.py")
TOOLS = ("nvidia-smi", "ethtool", "iostat", "sar", "numactl", "dmesg", "chronyc", "timedatectl", "journalctl")


def make_bin(folder: Path, config: dict, log: Path) -> dict:
    """A bin folder of stand-ins for the tools in `config` (others absent); returns env to run with it."""
    import os
    import sys

    folder.mkdir(parents=True, exist_ok=True)
    for tool in config:
        p = folder / tool
        p.write_text(f"#!{sys.executable}\nimport sys\nsys.path.insert(0, {str(STANDIN.parent)!r})\n"
                     f"import standin\nsys.exit(standin.main({tool!r}))\n")
        p.chmod(0o755)
    cfg = folder / "standin.json"
    cfg.write_text(json.dumps(config))
    # only the stand-ins: a real dmesg, nvidia-smi or sar of this machine must never be found
    return {"PATH": str(folder), "STANDIN_CONFIG": str(cfg), "STANDIN_LOG": str(log)}


def live_standins(log: Path) -> list[int]:
    """Pids started by stand-ins (and their children) that are still running."""
    import os

    if not log.exists():
        return []
    pids = [json.loads(ln)["pid"] for ln in log.read_text().splitlines() if ln.strip()]
    alive = []
    for pid in pids:
        try:
            with open(f"/proc/{pid}/stat") as fh:
                state = fh.read().rsplit(")", 1)[1].split()[0]
            if state != "Z":
                alive.append(pid)
        except OSError:
            continue
    # children of the hang mode carry no log line: find them by their parent
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/stat") as fh:
                    fields = fh.read().rsplit(")", 1)[1].split()
                if int(fields[1]) in pids and fields[0] != "Z":
                    alive.append(int(entry))
            except (OSError, IndexError, ValueError):
                continue
    return alive

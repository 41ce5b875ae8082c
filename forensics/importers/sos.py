"""Which files of a sosreport hold outputs our parsers read, and what the report says about its host.

Each source declares the sosreport paths it reads (``sosreport`` in ``forensics/sources/<name>_spec.py``).
sos stores each command's output under ``sos_commands/<plugin>/<command with spaces as _>``:
``kernel/dmesg``, ``networking/ethtool_-S_<iface>``, ``numa/numactl_--hardware``,
``nvidia/nvidia-smi_-q`` (and ``nvidia-smi_-q_-d_PERFORMANCE``, ``nvidia-smi_--query-gpu=..._--format_csv``),
``sar/sarDD`` (``sar -A -f saDD`` text); the sysstat daily text reports are copied to
``var/log/sa/sarDD`` (``var/log/sysstat/`` on Debian/Ubuntu). Host facts come from
``sos_commands/host/hostname`` (older: ``general/hostname``) or ``etc/hostname``, the kernel from
``sos_commands/kernel/uname_-a``, the zone from ``timedatectl`` output or ``etc/timezone``.

>>> pick("sos_commands/networking/ethtool_-S_ens1f0np0")
('ethtool', 'ens1f0np0.txt', {'iface': 'ens1f0np0'})
>>> pick("sos_commands/kernel/dmesg"), pick("var/log/sa/sar30"), pick("sos_commands/networking/ethtool_-i_eth0")
(('dmesg', 'dmesg.txt', {}), ('sar', 'sar30.txt', {}), None)
"""
from __future__ import annotations

import re
from pathlib import Path

from forensics.sources import descriptors

FACT_FILES = ("sos_commands/host/hostname", "sos_commands/general/hostname", "etc/hostname",
              "sos_commands/kernel/uname_-a", "sos_commands/date/timedatectl", "sos_commands/systemd/timedatectl",
              "etc/timezone")


def _rules() -> list:
    """(source, SosPath) for every sosreport path a source declares (``sosreport`` of its descriptor)."""
    return [(name, p) for name, d in descriptors().items() for p in d.sosreport]


def pick(rel: str) -> tuple[str, str, dict] | None:
    """(source, raw file name, hints) for a path inside the sosreport, or None when we do not read it."""
    for source, path in _rules():
        hit = path.match(rel)
        if hit:
            return (source, *hit)
    return None


def wanted(rel_in_archive: str) -> bool:
    """select() for extracting a sosreport tarball: the files we read plus the host facts."""
    parts = rel_in_archive.split("/", 1)
    rel = parts[1] if len(parts) == 2 else parts[0]
    return pick(rel) is not None or rel in FACT_FILES or pick(rel_in_archive) is not None or rel_in_archive in FACT_FILES


def find_root(tree: Path) -> Path | None:
    """The sosreport folder (holding sos_commands/) in `tree` or its single child, else None."""
    if (tree / "sos_commands").is_dir():
        return tree
    kids = [p for p in tree.iterdir() if p.is_dir() and not p.is_symlink()] if tree.is_dir() else []
    for k in kids:
        if (k / "sos_commands").is_dir():
            return k
    return None


def _plain_file(root: Path, rel: str) -> Path | None:
    """``root/rel`` when it is a regular file reached through no symbolic link (a report whose ``etc``
    links outside must not name its host from outside), else None."""
    p = root
    for part in rel.split("/"):
        p = p / part
        if p.is_symlink():
            return None
    return p if p.is_file() else None


def _first_line(root: Path, rel: str) -> str | None:
    p = _plain_file(root, rel)
    try:
        if p is not None:
            for ln in p.read_text(errors="replace").splitlines():
                if ln.strip():
                    return ln.strip()
    except OSError:
        return None
    return None


def facts(root: Path) -> dict:
    """hostname, kernel, timezone as far as the report tells."""
    out: dict = {}
    for rel in FACT_FILES[:3]:
        h = _first_line(root, rel)
        if h:
            out["hostname"] = h
            break
    if "hostname" not in out:
        m = re.match(r"^sosreport-(.+?)-(?:[0-9]{4}-[0-9]{2}-[0-9]{2}|[0-9]{8}|[0-9]+)", root.name)
        if m:
            out["hostname"] = m.group(1)
    uname = _first_line(root, "sos_commands/kernel/uname_-a")
    if uname and len(uname.split()) >= 3:
        out["kernel"] = uname.split()[2]
    for rel in ("sos_commands/date/timedatectl", "sos_commands/systemd/timedatectl"):
        p = _plain_file(root, rel)
        if p is not None:
            m = re.search(r"Time zone:\s*([A-Za-z0-9_+\-/]+)", p.read_text(errors="replace"))
            if m:
                out["timezone"] = m.group(1)
                break
    if "timezone" not in out:
        tz = _first_line(root, "etc/timezone")
        if tz:
            out["timezone"] = tz
    return out


def raw_files(root: Path) -> list[tuple[Path, str, str, dict]]:
    """(path, source, raw name, hints) for every sosreport file we read."""
    out = []
    for p in sorted(root.rglob("*")):
        rel = p.relative_to(root).as_posix()
        hit = pick(rel)
        if hit and _plain_file(root, rel) is not None:  # (no link followed, at any depth)
            out.append((p, *hit))
    return out

"""Pins each source's parser VERSION to what its real fixtures parse into, so a change of a parser's
tables cannot land without a new VERSION.

Parsed tables carry the versions of the parsers that wrote them (``tables/_meta.json``), and a bundle
or cache whose versions are current is not parsed again (forensics/bundle/trust.py). A parser that
reads more of an input than before (a new variant) with an unchanged VERSION therefore leaves every
earlier parse of such an input standing: a silent stale answer. The pin is, per source, its VERSION
and one sha256 over its fixtures' ``.expected.json`` files (names and contents): new or changed
expected tables change it. A new fixture counts too, though a parser that already read it would not
need a new VERSION: the cost of the bump is one parse more of old caches, the cost of a missed one a
stale table.

    python tests/parser_versions.py          # re-pin after `python tests/regen_expected.py` (refuses a
                                             # source whose tables changed while its VERSION did not)
"""
from __future__ import annotations

import hashlib
import json
import re
import sys
from pathlib import Path

PIN = Path(__file__).parent / "fixtures" / "parser_versions.json"
FIXTURES = Path(__file__).parent / "fixtures"


def digest(source: str) -> str:
    """sha256 over the names and contents of tests/fixtures/<source>/*.expected.json, in name order."""
    h = hashlib.sha256()
    d = FIXTURES / source
    for p in sorted(d.glob("*.expected.json")) if d.is_dir() else []:
        h.update(p.name.encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def current() -> dict[str, dict]:
    from forensics import sources

    return {name: {"version": int(mod.VERSION), "expected_sha256": digest(name)}
            for name, mod in sorted(sources.registry().items())}


def where(source: str) -> str:
    """The file of forensics/sources/ that assigns `source`'s VERSION."""
    from forensics import sources

    f = Path(sources.get(source).__file__)
    for p in [f] + (sorted(f.parent.glob("*.py")) if f.name == "__init__.py" else []):
        if re.search(r"^VERSION\s*=", p.read_text(), re.M):
            return "forensics/" + p.as_posix().split("/forensics/")[-1]
    return "forensics/" + f.as_posix().split("/forensics/")[-1]


def stale(pinned: dict, now: dict) -> list[str]:
    """One line per source whose tables changed while its VERSION did not (or went down)."""
    out = []
    for name, cur in now.items():
        old = pinned.get(name)
        if old is None:
            continue
        if cur["version"] < old["version"]:
            out.append(f"{name}: VERSION went down from {old['version']} to {cur['version']}")
        elif cur["expected_sha256"] != old["expected_sha256"] and cur["version"] == old["version"]:
            out.append(f"{name}: its fixtures' expected tables changed but VERSION is still {cur['version']}: raise "
                       f"VERSION in {where(name)} so that tables parsed before are parsed again")
    return out


def main() -> int:
    pinned = json.loads(PIN.read_text()) if PIN.is_file() else {}
    now = current()
    bad = stale(pinned, now)
    for line in bad:
        print(line, file=sys.stderr)
    keep = {n for n in now if any(line.startswith(n + ":") for line in bad)}
    out = {n: (pinned[n] if n in keep else v) for n, v in now.items()}
    PIN.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    print(f"wrote {PIN.relative_to(FIXTURES.parent.parent)}: {len(out) - len(keep)} sources pinned, {len(keep)} refused")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    raise SystemExit(main())

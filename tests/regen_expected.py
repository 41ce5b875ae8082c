"""Regenerate tests/fixtures/<source>/*.expected.json from the current parsers.

Usage: python tests/regen_expected.py [SOURCE ...]   (all sources when none given)
Review the diff before committing: these files pin what each real fixture parses into (line and
row counts, the sha256 of every table and of the unparsed lines in full, and three readable rows
per table; see fixture_cases.summarize).
"""
from __future__ import annotations

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from fixture_cases import cases, context_for, expected_path, summarize  # noqa: E402

from forensics.sources import parse_bytes  # noqa: E402


def main(argv: list[str]) -> None:
    wanted = set(argv) or None
    for source, f in cases():
        if wanted and source not in wanted:
            continue
        _, res = parse_bytes(f.read_bytes(), source, context_for(f))
        expected_path(f).write_text(json.dumps(summarize(res), indent=1, sort_keys=True, default=str) + "\n")
        print(f"{f.name}: lines={res.lines} unparsed={res.unparsed.height} rows={res.rows()}")


if __name__ == "__main__":
    main(sys.argv[1:])

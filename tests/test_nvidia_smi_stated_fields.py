"""--fields / --interval: what the user states about an nvidia-smi --query-gpu capture, end to end."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from forensics.importers.build import build_bundle
from forensics.db import open_bundle

FX = Path(__file__).parent / "fixtures" / "nvidia_smi"
SEED = FX / "nvidia_smi--csv-noheader-index-util-pulsing-seed.csv.txt"
FORENSICS = [str(Path(sys.executable).parent / "forensics")]


def cli(args, tmp_path):
    env = dict(os.environ, FORENSICS_CACHE_DIR=str(tmp_path / "cache"), TZ="UTC", LC_ALL="C")
    return subprocess.run(FORENSICS + [str(a) for a in args], capture_output=True, text=True, env=env, timeout=120)


def test_parse_fields_make_bare_numbers_readable_and_bad_options_are_one_line(tmp_path):
    nounits = tmp_path / "loop.txt"
    nounits.write_text("0, 100\n1, 7\n0, 3\n1, 100\n")
    r = cli(["parse", nounits, "--format", "json"], tmp_path)
    assert r.returncode == 2 and "no source recognises" in r.stderr  # bare numbers: not guessed
    r = cli(["parse", nounits, "--fields", "index,utilization.gpu", "--interval", "2", "--format", "json"], tmp_path)
    assert r.returncode == 0, r.stderr
    got = json.loads(r.stdout)
    assert got["source"] == "nvidia_smi" and got["rows"]["gpu_samples"] == 4 and got["unparsed"] == 0
    for bad, word in ((["--fields", "index,utilisation.gpu"], "unknown"), (["--interval", "0"], "interval")):
        r = cli(["parse", nounits, *bad], tmp_path)
        assert r.returncode == 2 and word in r.stderr and len(r.stderr.strip().splitlines()) == 1
        assert "Traceback" not in r.stderr


def test_bundle_keeps_the_stated_interval_with_the_file(tmp_path):
    out = tmp_path / "b.tar"
    build_bundle([SEED], out, host="node01", hints={"interval_s": 2.0})
    b = open_bundle(out, cache_dir=tmp_path / "cache")
    s = b.sql("SELECT sample_no, sample_interval_s, ts FROM gpu_samples")
    assert s["sample_no"].max() == 4 and set(s["sample_interval_s"]) == {2.0} and s["ts"].null_count() == s.height

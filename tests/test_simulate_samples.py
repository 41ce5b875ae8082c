"""sample_bundles/ is what the commands in its README write now: byte-identical, within size limits."""
from __future__ import annotations

import json
import shlex
import tarfile
from pathlib import Path

import pytest
import zstandard
from typer.testing import CliRunner

from forensics.cli import app
from forensics.simulate import SimConfig, Simulation
from forensics.timeutil import parse_duration

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_bundles"


def commands() -> list[list[str]]:
    text = (SAMPLES / "README.md").read_text()
    return [shlex.split(line)[1:] for line in text.splitlines() if line.startswith("forensics simulate ")]


def _opt(args: list[str], name: str) -> str:
    return args[args.index(name) + 1]


def _labels(path: Path) -> dict:
    with open(path, "rb") as fh:
        stream = zstandard.ZstdDecompressor().stream_reader(fh)
        with tarfile.open(fileobj=stream, mode="r|") as tf:
            for m in tf:
                if m.name == "truth/labels.json":
                    return json.load(tf.extractfile(m))
    raise AssertionError(f"{path}: no truth/labels.json")


def _regenerate(args: list[str], tmp_path: Path) -> Path:
    out = tmp_path / Path(_opt(args, "--out")).name
    args = list(args)
    args[args.index("--out") + 1] = str(out)
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    return out


def test_readme_lists_every_bundle_and_sizes():
    cmds = commands()
    outs = {Path(_opt(a, "--out")).name for a in cmds}
    present = {p.name for p in SAMPLES.glob("*.tar*")}
    assert outs == present and 4 <= len(outs) <= 6
    for name in ("healthy", "pfc_storm", "dataloader_starvation", "thermal_throttle", "seed000_case_study"):
        assert f"{name}.tar.zst" in outs
    sizes = [(SAMPLES / n).stat().st_size for n in outs]
    assert max(sizes) < 2_000_000 and sum(sizes) < 8_000_000
    assert (SAMPLES / "README.md").read_text().count("forensics analyze sample_bundles/") >= 1


@pytest.mark.parametrize("args", commands(), ids=lambda a: _opt(a, "--scenario"))
def test_truth_matches_the_simulator(args):
    cfg = SimConfig(scenario=_opt(args, "--scenario"), nodes=int(_opt(args, "--nodes")),
                    gpus_per_node=int(_opt(args, "--gpus-per-node")), duration_s=parse_duration(_opt(args, "--duration")),
                    interval_s=parse_duration(_opt(args, "--interval")), seed=int(_opt(args, "--seed")),
                    confounders="--no-confounders" not in args)
    stored = _labels(ROOT / _opt(args, "--out"))
    assert stored == json.loads(json.dumps(Simulation(cfg).labels()))


def test_healthy_sample_is_byte_identical(tmp_path):
    args = next(a for a in commands() if _opt(a, "--scenario") == "healthy")
    assert _regenerate(args, tmp_path).read_bytes() == (ROOT / _opt(args, "--out")).read_bytes()


@pytest.mark.slow
@pytest.mark.parametrize("args", commands(), ids=lambda a: _opt(a, "--scenario"))
def test_every_sample_is_byte_identical(args, tmp_path):
    assert _regenerate(args, tmp_path).read_bytes() == (ROOT / _opt(args, "--out")).read_bytes()

"""The README's examples run as written, so the README cannot drift from the tool (issue 14).

Every line of a README code block that starts with ``forensics`` is either
- a **synopsis** (it has ``[...]``, ``A|B`` or UPPERCASE placeholders): each ``--option`` it names
  must be an option of that command's ``--help``; or
- an **example**: it is run in a folder where ``incident.tar`` and ``incident.tar.zst`` are the
  sample bundle ``pfc_storm`` (the README's running example), and must succeed without a traceback.
The Quick start's analyze and the ``From Python`` block run too. What needs a real node or a long
run is skipped, saying why (SKIPPED below), never silently.
"""
from __future__ import annotations

import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXE = Path(sys.executable).parent / "forensics"
README = (ROOT / "README.md").read_text()
BLOCKS = re.findall(r"^```[a-z]*\n(.*?)^```", README, re.S | re.M)

# Example commands that cannot run here, and why (today's README gives them as synopses; the list
# keeps a future example of these from running a real collection or an 8-node simulation here).
SKIP = {
    "collect": "captures a real node's dmesg, ethtool, nvidia-smi for --duration seconds (tests/test_collect_run.py "
               "runs a short real collection where the tools exist)",
    "simulate --scenario": "writes an 8-node, 10-minute simulated bundle (minutes); tests/test_simulate_samples.py "
                           "regenerates the committed samples with the commands of sample_bundles/README.md",
}


def _commands() -> list[str]:
    out = []
    for block in BLOCKS:
        for line in block.splitlines():
            line = line.split("  #")[0].strip()
            if line.startswith("forensics ") and "──►" not in line:
                out.append(line)
    return out


COMMANDS = _commands()
SYNOPSIS = re.compile(r"\[|\.\.\.|\||\b[A-Z][A-Z_]{1,}\b(?![a-z])")


def _is_synopsis(line: str) -> bool:
    unquoted = re.sub(r"'[^']*'|\"[^\"]*\"", "", line)
    return bool(SYNOPSIS.search(unquoted))


def _verb(words: list[str]) -> list[str]:
    return words[1:3] if words[1] in ("cache", "archive") and len(words) > 2 else words[1:2]


def test_readme_has_examples_and_synopses():
    assert sum(_is_synopsis(c) for c in COMMANDS) >= 10
    assert sum(not _is_synopsis(c) for c in COMMANDS) >= 8


@pytest.fixture(scope="module")
def incident(tmp_path_factory) -> Path:
    d = tmp_path_factory.mktemp("readme")
    for name in ("incident.tar", "incident.tar.zst"):
        shutil.copy(ROOT / "sample_bundles" / "pfc_storm.tar.zst", d / name)
    return d


@pytest.mark.parametrize("line", [c for c in COMMANDS if _is_synopsis(c)])
def test_synopsis_options_exist(line):
    from typer.testing import CliRunner

    from forensics.cli import app

    words = line.split()
    verb = _verb(words)
    # in this process (the same --help text as the executable prints, without a Python start per line)
    r = CliRunner().invoke(app, [*verb, "--help"], env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    for opt in re.findall(r"(?<![\w-])(--[a-z][a-z-]*)", line):
        assert re.search(rf"(?<![\w-]){re.escape(opt)}(?![\w-])", r.stdout), f"README: `{line}` names {opt}, not in `forensics {' '.join(verb)} --help`"


@pytest.mark.slow
@pytest.mark.parametrize("line", [c for c in COMMANDS if not _is_synopsis(c)])
def test_example_runs(line, incident, cli_env):
    for prefix, why in SKIP.items():
        if line.startswith(f"forensics {prefix}"):
            pytest.skip(f"`{line}`: {why}")
    args = shlex.split(line)[1:]
    r = subprocess.run([str(EXE), *args], capture_output=True, text=True, cwd=incident, env=cli_env, timeout=600)
    assert r.returncode in (0, 1) and "Traceback" not in r.stderr, (line, r.returncode, r.stderr[-2000:])
    assert r.stdout or r.stderr


@pytest.mark.slow
def test_quick_start_runs(cli_env):
    quick = next(b for b in BLOCKS if "pip install" in b and "forensics analyze" in b).strip()
    assert quick.startswith("python3 -m venv .venv && .venv/bin/pip install -q -e '.[test]' && ")
    cmd = shlex.split(quick.split("&& ")[-1])
    assert cmd[0] == ".venv/bin/forensics"  # (this test's own environment stands in for .venv)
    r = subprocess.run([str(EXE), *cmd[1:]], capture_output=True, text=True, cwd=ROOT, env=cli_env, timeout=600)
    assert r.returncode == 0, r.stderr
    # what the README says the first command prints: the storm on the sending port first
    first = next(line for line in r.stdout.splitlines() if line.startswith("1. "))
    assert "pfc_storm" in first


@pytest.mark.slow
def test_python_block_runs(incident, cli_env):
    block = next(b for b in BLOCKS if b.startswith("import forensics"))
    code = "\n".join(line.split("  #")[0] for line in block.splitlines())
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=incident, env=cli_env, timeout=600)
    assert r.returncode == 0, r.stderr[-2000:]


OTHER = [line.strip() for b in BLOCKS for line in b.splitlines() if line.strip().startswith(("ssh ", "scp "))]


@pytest.mark.parametrize("line", OTHER)
def test_node_steps_skipped(line):
    pytest.skip(f"`{line}`: needs a GPU node reachable over ssh (the zipapp it runs is built by the example above)")


def test_suite_command_is_the_ci_one():
    suite = next(b for b in BLOCKS if "pytest" in b).strip()
    ci = (ROOT / ".ci" / "run").read_text() if (ROOT / ".ci" / "run").exists() else ""
    assert suite.endswith(".venv/bin/python -m pytest -q")  # (not run here: it is this suite)
    assert suite.splitlines()[-1] in ci.splitlines()  # the same command, extras included


def test_every_verb_of_the_readme_exists():
    from forensics.cli import app

    known = {c.name for c in app.registered_commands} | {g.name for g in app.registered_groups}
    for line in COMMANDS:
        assert line.split()[1] in known, line

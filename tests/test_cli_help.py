"""Every command has help and is documented in the README."""
from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from forensics.cli import app

README = (Path(__file__).parent.parent / "README.md").read_text()
COMMANDS = sorted(c.name or c.callback.__name__ for c in app.registered_commands) + sorted(
    g.name for g in app.registered_groups
)


def test_there_are_commands():
    assert {"parse", "sources", "schema"} <= set(COMMANDS)


@pytest.mark.parametrize("cmd", COMMANDS)
def test_command_has_help(cmd):
    res = CliRunner().invoke(app, [cmd, "--help"])
    assert res.exit_code == 0, res.output
    assert "Usage" in res.output


@pytest.mark.parametrize("cmd", COMMANDS)
def test_command_documented_in_readme(cmd):
    assert re.search(rf"forensics {re.escape(cmd)}\b", README), f"README does not document `forensics {cmd}`"

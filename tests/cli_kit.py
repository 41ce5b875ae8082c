"""`forensics ARGS` run in-process through its real entry point (one-line errors, exit codes), its
output captured by pytest's capsys: much faster than a subprocess, and the same code path."""
from __future__ import annotations

import io
import subprocess
import sys


def run_main(args, monkeypatch, capsys, stdin: str | None = None) -> subprocess.CompletedProcess:
    """Exit code, stdout and stderr of `forensics ARGS` (`stdin`: text given as standard input)."""
    from forensics.cli import main

    monkeypatch.setattr(sys, "argv", ["forensics", *map(str, args)])
    if stdin is not None:
        monkeypatch.setattr(sys, "stdin", io.StringIO(stdin))
    capsys.readouterr()
    try:
        main()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    out = capsys.readouterr()
    return subprocess.CompletedProcess(list(args), code, out.out, out.err)

"""Progress bars (rich) for parsing a bundle's hosts and for running the detectors: the terminal
side of the library's progress callbacks.

Shown on standard error only when it is a terminal and not silenced (`--quiet`); otherwise
:func:`terminal_progress` returns None and nothing is printed. The callbacks match what the
library reports (see :func:`forensics.analysis.analyze_paths`): ingest calls
``progress("parsing hosts/<host>/raw/<source>/<file>")`` per raw file, the detection engine calls
``progress(rule_name)`` after each rule.
"""
from __future__ import annotations

import sys


class TerminalProgress:
    """Two rich progress bars: files parsed (per host) and detectors run."""

    def __init__(self, console=None):
        from rich.console import Console
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

        self.console = console or Console(stderr=True)
        self.bar = Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(),
                            MofNCompleteColumn(), TimeElapsedColumn(), console=self.console, transient=False)
        self.hosts: list[str] = []
        self.files = 0
        self._parse_task = None
        self._detect_task = None
        self.bar.start()

    def parse(self, message: str) -> None:
        """Ingest callback: 'parsing hosts/<host>/raw/...' (any other message is shown as is)."""
        rel = message.removeprefix("parsing ").strip()
        parts = rel.split("/")
        host = parts[1] if len(parts) > 2 and parts[0] == "hosts" else None
        if host and host not in self.hosts:
            self.hosts.append(host)
        self.files += 1
        what = "/".join(parts[3:]) if host else rel
        desc = f"parsing host {len(self.hosts)} {host} {what}" if host else f"parsing {what}"
        if self._parse_task is None:
            self._parse_task = self.bar.add_task(desc, total=None)
        self.bar.update(self._parse_task, description=desc[:90], advance=1)

    def start_detection(self, total: int) -> None:
        if self._parse_task is not None:
            self.bar.update(self._parse_task, total=self.files, completed=self.files,
                            description=f"parsed {self.files} files of {len(self.hosts)} hosts")
        self._detect_task = self.bar.add_task("detecting", total=max(total, 1))

    def detect(self, rule_name: str) -> None:
        if self._detect_task is None:
            self.start_detection(0)
        self.bar.update(self._detect_task, advance=1, description=f"detecting: {rule_name}"[:90])

    def close(self) -> None:
        if self._detect_task is not None:
            task = self.bar.tasks[self._detect_task]
            self.bar.update(self._detect_task, description="detection done", completed=task.total)
        self.bar.stop()


def stderr_is_terminal() -> bool:
    return sys.stderr.isatty()


def terminal_progress(quiet: bool = False) -> TerminalProgress | None:
    """Bars on standard error when it is a terminal and not `quiet`, else None (silent)."""
    return TerminalProgress() if not quiet and stderr_is_terminal() else None

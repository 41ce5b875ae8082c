"""iostat's report bookkeeping, shared by its text readers and its JSON reader: each report's number, time
and host, the rows collected, the lines refused, and the result they make."""
from __future__ import annotations

import datetime as dt
from typing import Any

from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult, result, unparsed_rows
from forensics.sources._bounded import float_or_none

NAME = "iostat"
TABLES = ("disk_io", "cpu_util")


PROSE = "text among the device rows, not an iostat row (a label or prose line?)"


def row_reason(toks: list[str], ncols: int, dev_last: bool = False) -> str:
    """Why the words `toks` of a line under a Device header of `ncols` value columns are no device row: a line
    whose values are mostly words is text the paste's author put there ("Then 10 seconds later:"), else the
    count of its fields, else its device name is a number."""
    vals = toks[:-1] if dev_last else toks[1:]
    if len(toks) != ncols + 1:
        if sum(1 for t in vals if S.is_number(t)) * 2 < len(vals) or not vals:
            return PROSE
        return f"{len(toks)} fields for a device and {ncols} columns"
    return f"device name {(toks[-1] if dev_last else toks[0])!r} is a number"


class _State:
    """Report bookkeeping shared by the text and JSON readers."""

    def __init__(self, ctx: ParseContext):
        self.ctx = ctx
        self.col = S.Collector()
        self._extra: tuple | None = None
        self._last: S.Batch | None = None
        self.bad: list[tuple[int, str, str]] = []
        self.report = -1
        self.run_start = 0
        self.has_cpu = self.has_dev = False
        self.ts: dt.datetime | None = None
        self.exact = False
        self.host: str | None = None
        self.hosts: list[str] = []
        self.day: dt.date | None = None
        self.variant: str | None = None
        interval = ctx.hints.get("interval_s") if ctx.hints else None
        # (a bundle's hint, untrusted: a number of seconds up to a day, as nvidia_smi takes it; anything else, a
        # run of hundreds of digits, inf, a list, is no interval: float() raised or overflowed the time)
        iv = float_or_none(interval) if isinstance(interval, (int, float, str)) else None
        self.interval = iv if iv is not None and 0 < iv <= 86400 else None
        self.no_since_boot = bool(ctx.hints.get("y")) if ctx.hints else False

    def new_run(self, host: str | None) -> None:
        self.run_start = self.report + 1
        self._extra = None
        if host:
            self.host = host
            if host not in self.hosts:
                self.hosts.append(host)

    def new_report(self, ts: dt.datetime | None = None, exact: bool = False) -> None:
        self.report += 1
        self.has_cpu = self.has_dev = False
        self.ts, self.exact = ts, exact
        self._extra = None

    def extra(self) -> tuple:
        """The per-row extras (host, times, sample, since_boot) of the current report."""
        if self.report < 0:
            self.new_report()
        if self._extra is None:
            lus = xus = q = None
            if self.ts is not None:
                if self.exact:
                    xus, q = S.exact_us(self.ts), "exact"
                else:
                    lus, q = S.local_us(self.ts), "local"
            elif self.interval and self.ctx.capture_time:
                cap = self.ctx.capture_time
                cap = cap if cap.tzinfo else cap.replace(tzinfo=dt.timezone.utc)
                xus, q = S.exact_us(cap + dt.timedelta(seconds=self.interval * self.report)), "sampled"
            host = None if self.ctx.host else self.host
            since_boot = self.report == self.run_start and not self.no_since_boot
            self._extra = (host, lus, xus, q, None, self.report, since_boot)
        return self._extra

    def cpu_row(self, line_no: int, hdr: tuple[str, ...], toks: list[str], cmap: dict) -> None:
        b = self.col.batch(("cpu", hdr, id(cmap)), lambda: S.Batch("cpu_util", hdr, cmap, (), "cpu", "avg-cpu"))
        b.add(line_no, toks, self.extra())
        self.has_cpu = True

    def disk_row(self, line_no: int, hdr: tuple[str, ...], toks: list[str], cmap: dict) -> None:
        """`hdr[0]` / `toks[0]` are the device column."""
        b = self._last
        if b is None or b.hdr is not hdr or b.cmap is not cmap:
            b = self._last = self.col.batch(("dev", hdr, id(cmap)),
                                            lambda: S.Batch("disk_io", hdr, cmap, (hdr[0],), "device", "device"))
        b.add(line_no, toks, self.extra())
        self.has_dev = True

    def finish(self, texts: list[str], **meta: Any) -> ParseResult:
        tables, rejected = self.col.frames(TABLES, self.ctx.tz, rank_samples=False)
        bad = self.bad + [(ln, texts[ln - 1], reason) for ln, reason in rejected]
        up = unparsed_rows(bad, self.ctx, NAME) if bad else None
        return result(NAME, self.ctx, len(texts), tables, up, hosts=self.hosts, variant=self.variant,
                      reports=self.report + 1, ignored_columns=sorted(self.col.unmapped()), **meta)

"""iostat text, line by line: the lines that steer both text readers (`_Steer`: banners, the avg-cpu and
Device headers, ``-t`` times, sysstat 5 ``Time:`` lines) and the line reader `_parse_text`."""
from __future__ import annotations

import datetime as dt

from forensics.layout import MARKER_PREFIX
from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult
from forensics.sources.iostat.state import _State, row_reason


def _variant(cols: list[str]) -> str:
    if "tps" in cols:
        return "basic"
    if "f/s" in cols or "d/s" in cols:
        return "x-sysstat12"
    if "rareq-sz" in cols:
        return "x-sysstat11.5"
    return "x-old"


_DEVICE = ["Device:", "Device"]


class _Steer:
    """The lines that steer both text readers: blanks, markers, banners, the avg-cpu and Device headers,
    ``-t`` timestamps and sysstat 5 ``Time:`` lines. `mode` says what the next plain lines are rows of."""

    def __init__(self, st: _State, order: str):
        self.st, self.order = st, order
        self.mode: str | None = None
        self.cpu_cols: list[str] = []
        self.dev_cols: list[str] = []
        self.dev_hdr: tuple[str, ...] = ()
        self.dev_last = False
        self.hdr_open = False  # the line after a Device header may be the rest of it (wrapped by a mail client)
        # avg-cpu and Device header lines read before, by their text: (kind, columns, device last, known);
        # a report repeats both, so each distinct header is split and checked once
        self._seen: dict[str, tuple[str, tuple[str, ...], bool, bool]] = {}

    def line(self, ln: int, text: str) -> list[str] | None:
        """None when line `ln` steered (or is blank, or a marker); else its words, a row for `mode`."""
        st = self.st
        hdr_open, self.hdr_open = self.hdr_open, False
        seen = None if hdr_open else self._seen.get(text)
        if seen is not None:
            return self._header(ln, text, *seen)
        s = text.strip()
        if not s:
            if self.mode == "cpu":
                self.mode = None
            return None
        if s.startswith(MARKER_PREFIX):
            return None
        toks = s.split()
        if hdr_open and not self.dev_last and all(t in S.DISK_COLS for t in toks):
            self.dev_cols += toks  # the header's wrapped tail: "%rrqm  %wrqm r_await ... %util"
            self.dev_hdr = ("Device",) + tuple(self.dev_cols)
            st.variant = _variant(self.dev_cols)
            return None
        b = S.banner(s) if s[0] in "LG" else None  # the banner starts "Linux" or "GNU/Linux"
        if b:
            st.new_run(b["host"])
            st.day = S.parse_date(b["date"], self.order)
            self.mode = None
            return None
        if toks[0] == "avg-cpu:":  # ("%Nice" of a paste whose header was capitalised: sysstat prints "%nice")
            cols = tuple(t.lower() for t in toks[1:])
            seen = ("cpu", cols, False, bool(cols) and all(c in S.CPU_COLS for c in cols))
        elif toks[0] in _DEVICE or (len(toks) > 1 and toks[-1] in _DEVICE):
            last = toks[0] not in _DEVICE
            cols = tuple(toks[:-1] if last else toks[1:])
            seen = ("dev", cols, last, any(c in S.DISK_COLS for c in cols))
        else:
            seen = None
        if seen is not None:
            if len(self._seen) < 256:
                self._seen[text] = seen
            return self._header(ln, text, *seen)
        if toks[0][:1].isdigit():
            ts, exact = S.parse_timestamp(s, self.order)
            if ts is not None:
                st.new_report(ts, exact)
                self.mode = None
                return None
        if toks[0] == "Time:":  # sysstat 5: "Time: 03:59:48 PM", the date is the banner's
            tod = S.parse_tod(toks[1:])
            if tod and 1 + tod[1] == len(toks):
                ts = dt.datetime.combine(st.day, dt.time()) + dt.timedelta(seconds=tod[0]) if st.day else None
                st.new_report(ts, False)
                self.mode = None
                return None
        return toks

    def _header(self, ln: int, text: str, kind: str, cols: tuple[str, ...], last: bool, known: bool) -> None:
        """An avg-cpu (`kind` "cpu") or Device ("dev") header line with its columns `cols`."""
        st = self.st
        if kind == "cpu":
            self.cpu_cols = list(cols)
            if not known:
                st.bad.append((ln, text, "avg-cpu header with unknown columns"))
                self.mode = None
                return None
            if st.report < 0 or st.has_cpu or st.has_dev:
                st.new_report()
            self.mode = "cpu"
            return None
        self.dev_last = last
        self.dev_cols = list(cols)
        self.dev_hdr = ("Device",) + cols
        if not known:
            st.bad.append((ln, text, "Device header without known iostat columns"))
            self.mode = None
            return None
        if st.report < 0 or st.has_dev:
            st.new_report()
        st.variant = st.variant or _variant(self.dev_cols)
        self.mode = "dev"
        self.hdr_open = True
        return None


def _parse_text(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    dates = [t.split()[0] for t in texts if t[:1].isdigit() and len(t) < 64 and t.split()]
    dates += [b["date"] for b in map(S.banner, texts[:2000]) if b]
    order, assumed = S.date_order(dates, texts[:400])
    r = _Steer(st, order)
    held: tuple[int, str, list[str], int] | None = None  # a device row cut short, waiting for its wrapped tail
    for i, text in enumerate(texts):
        ln = i + 1
        toks = r.line(ln, text)
        if held is not None:
            hln, htext, htoks, hcols = held  # hcols: the columns of the header the row stood under
            held = None
            if toks is not None and r.mode == "dev" and all(S.is_number(t) for t in toks) \
                    and len(htoks) + len(toks) == len(r.dev_cols) + 1:
                toks = htoks + toks  # a row a mail client wrapped: the tail line is used with it
                ln, text = hln, htext
            else:
                st.bad.append((hln, htext, row_reason(htoks, hcols)))
        if toks is None:
            continue
        if r.mode == "dev" and not r.dev_last and len(toks) < len(r.dev_cols) + 1 \
                and not S.is_number(toks[0]) and i + 1 < len(texts):  # (-h of sysstat <= 11.4: the name alone)
            held = (ln, text, toks, len(r.dev_cols))
            continue
        try:
            if r.mode == "cpu":
                if len(toks) != len(r.cpu_cols):
                    raise S.BadValue(f"{len(toks)} values for {len(r.cpu_cols)} avg-cpu columns")
                st.cpu_row(ln, tuple(r.cpu_cols), toks, S.CPU_COLS)
                r.mode = None
            elif r.mode == "dev":
                if len(toks) != len(r.dev_cols) + 1:
                    raise S.BadValue(row_reason(toks, len(r.dev_cols), r.dev_last))
                dev, vals = (toks[-1], toks[:-1]) if r.dev_last else (toks[0], toks[1:])
                if S.is_number(dev):
                    raise S.BadValue(f"device name {dev!r} is a number")
                st.disk_row(ln, r.dev_hdr, [dev] + vals, S.DISK_COLS)
            else:
                st.bad.append((ln, text, "not iostat output (no header before it)"))
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    meta = {"date_order": order, "date_order_assumed": assumed}
    return st.finish(texts, **meta)

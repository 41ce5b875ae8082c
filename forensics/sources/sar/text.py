"""sar text reports read line by line (every shape, locale and damaged input)."""
from __future__ import annotations

import datetime as dt
from zoneinfo import ZoneInfo

from forensics.layout import MARKER_PREFIX
from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult
from forensics.sources.sar.sections import (
    _AMPM_TOKENS, _AVERAGE, _NCPU, _ROLLOVER_S, _State, _fit, _text_batch, is_section_header)


# ---------------------------------------------------------------- text reports

def _capture_day(ctx: ParseContext) -> dt.date | None:
    cap = ctx.capture_time
    if cap is None:
        return None
    cap = cap if cap.tzinfo else cap.replace(tzinfo=dt.timezone.utc)
    try:
        return cap.astimezone(ZoneInfo(ctx.tz)).date() if ctx.tz else cap.astimezone(dt.timezone.utc).date()
    except Exception:
        return cap.date()


def _parse_text(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    banners = [b for b in (S.banner(t) for t in texts if t.startswith(("Linux", "GNU/Linux"))) if b]
    order, assumed = S.date_order([b["date"] for b in banners], texts[:400])
    day = _capture_day(ctx)
    date_source = "capture_time" if day else None
    day_us = S.local_us(dt.datetime.combine(day, dt.time())) if day else None
    track: dict[tuple, list[int]] = {}  # section header -> [last seconds, day offset]
    batches: dict[tuple, S.Batch] = {}
    tod_cache: dict[tuple[str, str], tuple[int, int] | None] = {}
    b: S.Batch | None = None
    host = st.row_host()
    is_num = S.is_number
    averages: list[tuple[int, str, str]] = []  # (line_no, text, the words after the Average: label)
    headers: list[tuple[int, str, str]] = []  # (line_no, text, its words) of each timed section header
    for i, text in enumerate(texts):
        ln = i + 1
        s = text.strip()
        if not s or s.startswith(MARKER_PREFIX):
            continue
        if s[0] in "LG":
            bn = S.banner(s)
            if bn:
                st.see_host(bn["host"])
                host = st.row_host()
                d = S.parse_date(bn["date"], order)
                if d is not None:
                    day, date_source = d, "banner"
                    day_us = S.local_us(dt.datetime.combine(day, dt.time()))
                track.clear()
                b = None
                continue
        toks = s.split()
        ck = (toks[0], toks[1] if len(toks) > 1 and toks[1] in _AMPM_TOKENS else "")
        tod = tod_cache.get(ck, 0)
        if tod == 0:
            tod = tod_cache[ck] = S.parse_tod(toks[:2])
        if tod is None:
            m = _AVERAGE.match(s)
            if m:
                st.average_lines += 1
                averages.append((ln, text, s[m.end():]))
            else:
                st.bad.append((ln, text, "not a sar line (no leading time)"))
            continue
        secs, n = tod
        rest = toks[n:]
        if not rest:
            st.bad.append((ln, text, "time without values"))
            continue
        header = False
        if rest[0] == "LINUX" and len(rest) > 1 and rest[1] == "RESTART":
            key = ("LINUX RESTART",)
        elif rest[0] == "COM":
            st.comments.append(" ".join(rest[1:]))
            continue
        elif not (is_num(rest[-1]) or is_num(rest[0])) and not any(is_num(t) for t in rest) \
                and (tuple(rest) in batches or is_section_header(rest)):
            key = tuple(rest)  # a section header; a line without numbers that names no column is a row (below)
            header = True
            b = batches.get(key)
            if b is None:
                b = batches[key] = st.col.batch(key, lambda: _text_batch(key))
        elif b is None:
            st.bad.append((ln, text, "sar data row before any column header"))
            continue
        else:
            key = b.hdr
        t = track.get(key)
        if t is None:
            t = track[key] = [secs, 0]
        elif secs < t[0] - _ROLLOVER_S:
            t[1] += 1  # midnight passed
        t[0] = secs
        off = t[1] * 86400 + secs
        lus = None if day_us is None else day_us + off * 1_000_000
        extra = (host, lus, None, "local" if lus is not None else None, lus if lus is not None else off * 1_000_000,
                 None, False)
        if key == ("LINUX RESTART",):
            m = _NCPU.search(s)
            label = (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=lus)).isoformat() if lus is not None else \
                f"{secs // 3600:02d}:{secs // 60 % 60:02d}:{secs % 60:02d}"
            st.restart(ln, extra, int(m.group(1)) if m else None, label)
            continue
        if header:
            headers.append((ln, text, " ".join(rest)))
            continue  # header line: used, its time only advances the section clock
        try:
            b.add(ln, _fit(b, rest), extra)
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    if averages and not track and not batches:
        # a report pasted as its summary lines only (`sar -n DEV 1 5 | grep Average`): no interval rows
        # to summarise, so the Average: lines are the data (one sample, no time)
        _averages_only(st, averages, host)
        return st.finish(texts, variant="text-averages-only", date_order=order, date_order_assumed=assumed,
                         date_source=None)
    if averages and headers and not any(x.rows() for x in batches.values()):
        # timed section headers with Average: lines under them and no interval row anywhere: sysstat 4 (2.4-era
        # `sar -A` of a whole run, mailed as its summaries) or `sar ... | grep -v` of the samples. The Average:
        # lines are the data, read as a paste of summaries only is (one sample, no time, meta averages_only):
        # the table contract marks averages by the file, so this is done only where every row is one
        _averages_only(st, sorted(headers + averages), host)
        return st.finish(texts, variant="text-averages-only", date_order=order, date_order_assumed=assumed,
                         date_source=None)
    return st.finish(texts, variant="text", date_order=order, date_order_assumed=assumed, date_source=date_source)


def _averages_only(st: _State, averages: list[tuple[int, str, str]], host: str | None) -> None:
    """Rows from `Average:` lines of a paste that has no timed line: each `Average:` header opens its
    section, the lines after it are its rows, with no time (ts null, quality "none") and sample_no 0.
    The rows are means over the report's whole run (meta["averages_only"]), not interval samples."""
    is_num = S.is_number
    b: S.Batch | None = None
    batches: dict[tuple, S.Batch] = {}
    extra = (host, None, None, None, 0, None, False)
    for ln, text, after in averages:
        rest = after.split()
        if not rest:
            st.bad.append((ln, text, "summary label without values"))
            continue
        if not any(is_num(t) for t in rest):
            key = tuple(rest)
            b = batches.get(key)
            if b is None:
                b = batches[key] = st.col.batch(key, lambda: _text_batch(key))
            continue
        if b is None:
            st.bad.append((ln, text, "sar summary row before any column header"))
            continue
        try:
            b.add(ln, _fit(b, rest), extra)
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    st.averages_only = True

"""``sadf -d`` (``# hostname;interval;timestamp;...`` sections, UTC timestamps)."""
from __future__ import annotations

import datetime as dt
from collections import Counter

from forensics.layout import MARKER_PREFIX
from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult
from forensics.sources.sar.sections import _NCPU, _State, _fit, _text_batch


# ---------------------------------------------------------------- sadf -d

def _sadf_time(s: str) -> tuple[dt.datetime | None, bool]:
    s = s.strip()
    if s.isdigit():  # sadf -d -U: seconds since the epoch
        return dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc) + dt.timedelta(seconds=int(s)), True
    utc = s.endswith(" UTC")
    ts, exact = S.parse_timestamp(s[:-4] if utc else s, "mdy")
    if ts is None:
        parts = s.rsplit(" ", 1)  # a zone abbreviation other than UTC: local time
        if len(parts) == 2 and parts[1].isalpha():
            ts, exact = S.parse_timestamp(parts[0], "mdy")
    if ts is not None and utc and not exact:
        return ts.replace(tzinfo=dt.timezone.utc), True
    return ts, exact


def _parse_sadf_d(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    b: S.Batch | None = None
    intervals: Counter = Counter()
    ts_cache: dict[str, tuple[int | None, int | None]] = {}
    for i, text in enumerate(texts):
        ln = i + 1
        s = text.strip()
        if not s or s.startswith(MARKER_PREFIX):
            continue
        if s[0] == "#":
            fields = s[1:].strip().split(";")
            if len(fields) >= 4 and fields[0] == "hostname" and fields[2] == "timestamp":
                hdr = tuple(fields[3:])
                b = st.col.batch(hdr, lambda: _text_batch(hdr))
            else:
                st.bad.append((ln, text, "comment line that is not a sadf -d header"))
            continue
        fields = s.split(";")
        if len(fields) < 4:
            st.bad.append((ln, text, "not a sadf -d record"))
            continue
        host, interval, tss, vals = fields[0], fields[1], fields[2], fields[3:]
        us = ts_cache.get(tss)
        if us is None:
            ts, exact = _sadf_time(tss)
            us = ts_cache[tss] = (None, None) if ts is None else \
                ((None, S.exact_us(ts)) if exact else (S.local_us(ts), None))
        lus, xus = us
        if lus is None and xus is None:
            st.bad.append((ln, text, f"timestamp {tss[:40]!r} not understood"))
            continue
        if host and host != st.host:
            st.see_host(host)
        extra = (st.row_host(host), lus, xus, "local" if lus is not None else "exact", xus if xus is not None else lus,
                 None, False)
        if vals[0].startswith("LINUX-RESTART"):
            m = _NCPU.search(s)
            st.restart(ln, extra, int(m.group(1)) if m else None, tss)
            continue
        if b is None:
            st.bad.append((ln, text, "sadf -d record before any header"))
            continue
        intervals[interval] += 1
        try:
            use = b
            if "CPU*" in b.hdr:  # INTR;CPU*: the total then one value per CPU
                k = b.hdr.index("CPU*")
                extra_n = len(vals) - k
                if extra_n < 1:
                    raise S.BadValue("no per-CPU values")
                hdr = b.hdr[:k] + ("all",) + tuple(f"CPU{j}" for j in range(extra_n - 1))
                use = st.col.batch(hdr + ("<sadf CPU*>",), lambda: S.Batch(
                    "sar_generic", hdr, None, tuple(x for x in hdr if S.is_item_header(x)), None, b.section))
            use.add(ln, _fit(use, vals), extra)
        except S.BadValue as e:
            st.bad.append((ln, text, str(e)))
    iv = intervals.most_common(1)[0][0] if intervals else None
    return st.finish(texts, variant="sadf-d", interval_s=int(iv) if iv and iv.isdigit() else None)

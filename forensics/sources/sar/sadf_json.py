"""``sadf -j`` JSON, read line by line (a truncated file still yields its complete records)."""
from __future__ import annotations

import datetime as dt
from typing import Any

from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult
from forensics.sources.sar.sections import _State


# ---------------------------------------------------------------- sadf -j

_JSON_ITEM_KEYS = {"line", "number", "bus", "idvendor", "idprod"}
_JSON_TYPED = {  # statistics member path -> (table, key map, item key, item column)
    ("cpu-load",): ("cpu_util", S.CPU_JSON, "cpu", "cpu"),
    ("cpu-load-all",): ("cpu_util", S.CPU_JSON, "cpu", "cpu"),
    ("disk",): ("disk_io", S.DISK_JSON, "disk-device", "device"),
    ("network", "net-dev"): ("sar_net_dev", S.NET_DEV_JSON, "iface", "iface"),
    ("network", "net-edev"): ("sar_net_edev", S.NET_EDEV_JSON, "iface", "iface"),
    ("memory",): ("sar_memory", S.MEM_JSON, None, None),
    ("queue",): ("sar_queue", S.QUEUE_COLS, None, None),
}


def _flatten(prefix: str, d: dict, out: list[tuple[str, Any]]) -> None:
    for k, v in d.items():
        if isinstance(v, dict):
            _flatten(f"{prefix}{k}.", v, out)
        else:
            out.append((f"{prefix}{k}", v))


def _parse_json(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    cur: dict[str, Any] = {"extra": None, "day": None}

    def extra() -> tuple:
        return cur["extra"] or (st.row_host(), None, None, None, None, None, False)

    def time_of(val: Any) -> tuple[dt.datetime | None, bool]:
        if isinstance(val, dict):
            d = S.parse_date(str(val.get("date", "")), "mdy")
            tod = S.parse_tod(str(val.get("time", "")).split())
            if d is None or tod is None:
                return None, False
            exact = val.get("utc") == 1 or str(val.get("tz", "")).upper() in ("UTC", "GMT")
            return dt.datetime.combine(d, dt.time()) + dt.timedelta(seconds=tod[0]), exact
        ts, exact = S.parse_timestamp(str(val), "mdy")
        if ts is None and cur["day"] is not None:
            tod = S.parse_tod(str(val).split())
            ts = dt.datetime.combine(cur["day"], dt.time()) + dt.timedelta(seconds=tod[0]) if tod else None
        return ts, exact

    def extra_for(ts: dt.datetime, exact: bool) -> tuple:
        if exact:
            us = S.exact_us(ts if ts.tzinfo else ts.replace(tzinfo=dt.timezone.utc))
            return (st.row_host(), None, us, "exact", us, None, False)
        us = S.local_us(ts)
        return (st.row_host(), us, None, "local", us, None, False)

    batches: dict[tuple, S.Batch] = {}

    def add(section: str, path: tuple, d: Any, ln: int) -> None:
        if type(d) is not dict:
            if d is None or type(d) in (int, float):
                d = {path[-1]: d}
            else:
                raise S.BadValue(f"unexpected JSON value in {section!r}")
        if any(type(v) is dict for v in d.values()):
            pairs: list[tuple[str, Any]] = []
            _flatten("", d, pairs)
            hdr, vals = tuple(k for k, _ in pairs), [v for _, v in pairs]
        else:
            hdr, vals = tuple(d), list(d.values())
        toks = [v if type(v) is str else S.json_tok(v) for v in vals]
        key = (path, hdr, tuple(type(v) is str for v in vals))
        b = batches.get(key)
        if b is None:
            spec = _JSON_TYPED.get(path)
            if spec:
                table, cmap, item_key, item_col = spec
                if item_key and not isinstance(d.get(item_key), str):
                    raise S.JsonError(f"{section} entry without {item_key}")
                b = S.Batch(table, hdr, cmap, (item_key,) if item_key else (), item_col, section)
            else:
                items = tuple(k for k, v in zip(hdr, vals) if type(v) is str or k in _JSON_ITEM_KEYS)
                b = S.Batch("sar_generic", hdr, None, items, None, section)
            b = batches[key] = st.col.batch(("json",) + key, lambda: b)
        b.add(ln, toks, extra())

    def each(val: Any) -> list:
        return val if isinstance(val, list) else [val]

    def stat(sub: list[str], val: Any, ln: int) -> None:
        if sub == ["timestamp"]:
            ts, exact = time_of(val)
            if ts is None:
                raise S.JsonError(f"timestamp {str(val)[:60]!r} not understood")
            cur["extra"] = extra_for(ts, exact)
            return
        path = tuple(sub)
        if path in _JSON_TYPED or not isinstance(val, dict) or not val or \
                not all(isinstance(v, (dict, list)) for v in val.values()):
            for d in each(val):
                add(".".join(sub), path, d, ln)
            return
        for kk, vv in val.items():  # network, power-management, psi: groups of sub-sections
            stat(sub + [kk], vv, ln)

    def record() -> None:
        cur["extra"] = None

    def member(path: list[str], val: Any, ln: int) -> bool:
        rest = path[2:]
        if rest[0] in ("restarts", "comments") and len(rest) == 1:
            for e in each(val):
                if isinstance(e, dict):
                    walker.walk(path, e, ln)
            return True
        if rest[1:] == ["boot"] and rest[0] == "restarts" and isinstance(val, dict):
            ts, exact = time_of(val)
            ex = extra_for(ts, exact) if ts else (st.row_host(), None, None, None, None, None, False)
            ncpu = val.get("cpu_count")
            st.restart(ln, ex, ncpu if isinstance(ncpu, int) and not isinstance(ncpu, bool) else None,
                       ts.isoformat() if ts else "?")
            return True
        if rest[1:] == ["comment"] and rest[0] == "comments" and isinstance(val, dict):
            st.comments.append(str(val.get("com", "")))
            return True
        if len(rest) == 1 and not isinstance(val, (dict, list)):
            if rest[0] == "nodename" and isinstance(val, str):
                st.see_host(val)
            elif rest[0] in ("file-date", "date"):
                cur["day"] = S.parse_date(str(val), "mdy")
            return True
        return False

    walker = S.HostsJson(lambda: None, record, stat, member)
    for i, text in enumerate(texts):
        if not text.strip():
            continue
        mark = st.col.mark()
        n_restarts, n_comments = len(st.restarts), len(st.comments)
        try:
            walker.feed(text, i + 1)
        except (S.JsonError, S.BadValue) as e:
            st.col.rollback(mark)
            del st.restarts[n_restarts:], st.comments[n_comments:]
            st.bad.append((i + 1, text, f"sadf -j JSON: {e}"))
    return st.finish(texts, variant="sadf-j")

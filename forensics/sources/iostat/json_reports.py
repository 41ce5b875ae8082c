"""iostat ``-o JSON``: each ``hosts[].statistics[]`` member (timestamp, avg-cpu, disk) read line by line by the
shared sysstat JSON walker, so a truncated file still yields its complete reports."""
from __future__ import annotations

import datetime as dt
import re
from typing import Any

from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult
from forensics.sources.iostat.state import _State

_DATEISH = re.compile(r'"(?:date|timestamp)"\s*:\s*"([^"]*)"')


def _parse_json(texts: list[str], ctx: ParseContext) -> ParseResult:
    st = _State(ctx)
    st.variant = "json"
    found = [m.group(1).split()[0] for t in texts[:5000] for m in _DATEISH.finditer(t) if m.group(1).split()]
    order, assumed = S.date_order(found)

    def stat(sub: list[str], val: Any, ln: int) -> None:
        if sub == ["timestamp"]:
            ts, exact = S.parse_timestamp(str(val), order)
            if ts is None and st.day is not None:
                tod = S.parse_tod(str(val).split())
                if tod and tod[1] == len(str(val).split()):
                    ts = dt.datetime.combine(st.day, dt.time()) + dt.timedelta(seconds=tod[0])
            if ts is None:
                raise S.JsonError(f"timestamp {str(val)[:40]!r} not understood")
            st.ts, st.exact, st._extra = ts, exact, None
        elif sub == ["avg-cpu"] and isinstance(val, dict):
            st.cpu_row(ln, tuple(val), [S.json_tok(v) for v in val.values()], S.CPU_JSON)
        elif sub == ["disk"]:
            for d in val if isinstance(val, list) else [val]:
                if not isinstance(d, dict) or not isinstance(d.get("disk_device"), str):
                    raise S.JsonError("disk entry without disk_device")
                keys = [k for k in d if k != "disk_device"]
                st.disk_row(ln, ("disk_device", *keys), [d["disk_device"]] + [S.json_tok(d[k]) for k in keys], S.DISK_JSON)
        else:
            raise S.JsonError(f"unexpected statistics member {'.'.join(sub)!r}")

    def member(path: list[str], val: Any, ln: int) -> bool:
        rest = path[2:]
        if len(rest) != 1 or isinstance(val, (dict, list)):
            return False
        if rest[0] == "nodename" and isinstance(val, str):
            st.host, st._extra = val, None
            if val not in st.hosts:
                st.hosts.append(val)
        elif rest[0] == "date":
            st.day = S.parse_date(str(val), order)
        return True

    walker = S.HostsJson(lambda: st.new_run(None), st.new_report, stat, member)
    for i, text in enumerate(texts):
        if not text.strip():
            continue
        mark = st.col.mark()
        try:
            walker.feed(text, i + 1)
        except (S.JsonError, S.BadValue) as e:
            st.col.rollback(mark)
            st.bad.append((i + 1, text, f"iostat JSON: {e}"))
    return st.finish(texts, date_order=order, date_order_assumed=assumed)

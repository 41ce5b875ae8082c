"""sar text reports read vectorised (big ASCII inputs): the same rows as the line loop."""
from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources import _sysstat as S
from forensics.sources._base import ParseContext, ParseResult, result, unparsed_frame
from forensics.sources.sar.sections import NAME, TABLES, _AVERAGE, _NCPU, _ROLLOVER_S, _State, _text_batch, is_section_header
from forensics.sources.sar.text import _capture_day


# ---------------------------------------------------------------- text reports, vectorised
# The same reading as _parse_text, in polars: line kinds, times, the section each row belongs to and
# the midnight roll-over per section are column expressions; Python sees only banners, headers,
# LINUX RESTART and COM lines. Inputs it does not cover (zh_CN times, the separator bytes that
# Python's str.split() treats as blanks and polars does not, free-text columns of sar -m) take
# the line loop above.

_K_SKIP, _K_BANNER, _K_AVG, _K_NOTIME, _K_NOVALS, _K_RESTART, _K_COM, _K_HEADER, _K_DATA = range(9)
_NUM_TOKEN = r"(?:^|\s)(?:[+-]?(?:[0-9]+(?:[.,][0-9]*)?|[.,][0-9]+)|[0-9]+(?:[.,][0-9]+)?(?:[BkKMGTPE]B?|%))(?:\s|$)"
_MARKER_RX = r"^\s*" + MARKER_PREFIX  # holds no pattern characters
_AVERAGE_RX = r"^\s*" + _AVERAGE.pattern[1:]
_SLOW_BYTES = (*S.SPLIT_ONLY_BLANKS, "时".encode(), "時".encode())  # and zh_CN times


def _fast_ok(data: bytes) -> bool:
    return not S.has_any(data, _SLOW_BYTES)


def _parse_text_fast(lines: pl.DataFrame, ctx: ParseContext, data: bytes) -> ParseResult | None:
    st = _State(ctx)
    toks = pl.col("_toks")
    t0, t1 = toks.list.first(), toks.list.get(1, null_on_oob=True)
    h = t0.str.head(-6).cast(pl.Int32, strict=False)
    mi = t0.str.slice(-5, 2).cast(pl.Int32, strict=False)
    se = t0.str.tail(2).cast(pl.Int32, strict=False)
    ap = t1.is_in(["AM", "PM", "am", "pm"]).fill_null(False)
    ok = (t0.str.contains(r"^[0-9]{1,2}:[0-9]{2}:[0-9]{2}$") & (mi <= 59) & (se <= 60)
          & pl.when(ap).then((h >= 1) & (h <= 12)).otherwise(h <= 23)).fill_null(False)
    secs = (pl.when(ap).then((h % 12 + pl.when(t1.is_in(["PM", "pm"])).then(12).otherwise(0)) * 3600)
            .otherwise(h * 3600) + mi * 60 + pl.min_horizontal(se, pl.lit(59, pl.Int32))).cast(pl.Int64)
    nt = pl.col("_nt")
    r0, r1 = toks.list.get(nt, null_on_oob=True), toks.list.get(nt + 1, null_on_oob=True)
    text = pl.col("text")
    # kinds before banners are known (a banner starts with L or G, which no other kind below does but
    # 'not a time' lines: those are told apart in Python). Anchored patterns on the unstripped text
    # allow the leading blanks the line loop strips.
    kind = (pl.when((toks.list.len() == 0) | text.str.contains(_MARKER_RX)).then(_K_SKIP)
            .when(~pl.col("_ok")).then(_K_NOTIME)  # or Average: told apart below, on these lines only
            .when(pl.col("_nrest") <= 0).then(_K_NOVALS)
            .when((r0 == "LINUX") & (r1 == "RESTART")).then(_K_RESTART)
            .when(r0 == "COM").then(_K_COM)
            .when(~text.str.contains(_NUM_TOKEN)).then(_K_HEADER)
            .otherwise(_K_DATA)).cast(pl.Int8)
    df = (lines.lazy()
          .with_columns(S.words(text, data).alias("_toks"))
          .with_columns(ok.alias("_ok"), secs.alias("_secs"), (1 + ap.cast(pl.Int32)).alias("_nt"))
          .with_columns((toks.list.len().cast(pl.Int32) - nt).alias("_nrest"))
          .with_columns(kind.alias("kind"))
          .drop("_ok")
          .collect(engine="in-memory"))
    notime = df.filter(pl.col("kind") == _K_NOTIME).select("line_no", pl.col("text").str.contains(_AVERAGE_RX))
    if notime.height and notime["text"].any():
        avg = notime.filter("text")["line_no"].implode()
        df = df.with_columns(pl.when(pl.col("line_no").is_in(avg)).then(pl.lit(_K_AVG, pl.Int8))
                             .otherwise(pl.col("kind")).alias("kind"))
    # banners: lines starting with L or G that match (checked in Python: few)
    lg = df.filter((pl.col("kind") == _K_NOTIME) & text.str.contains(r"^\s*[LG]"))
    banners = [(ln, b, t.startswith(("Linux", "GNU/Linux")))
               for ln, t in zip(lg["line_no"].to_list(), lg["text"].to_list()) for b in (S.banner(t.strip()),) if b]
    order, assumed = S.date_order([b["date"] for _, b, unindented in banners if unindented],
                                  lines["text"].head(400).to_list())
    day = _capture_day(ctx)
    date_source = "capture_time" if day else None
    seg_day = [S.local_us(dt.datetime.combine(day, dt.time())) if day else None]
    seg_host = [st.row_host()]
    for _, bn, _ in banners:
        st.see_host(bn["host"])
        d = S.parse_date(bn["date"], order)
        if d is not None:
            day, date_source = d, "banner"
        seg_day.append(S.local_us(dt.datetime.combine(day, dt.time())) if day else None)
        seg_host.append(st.row_host())
    if banners:
        df = df.with_columns(pl.when(pl.col("line_no").is_in(pl.Series([ln for ln, _, _ in banners], dtype=pl.Int64)
                                                             .implode())).then(pl.lit(_K_BANNER, pl.Int8))
                             .otherwise(pl.col("kind")).alias("kind"))
    count = np.bincount(df["kind"].to_numpy(), minlength=_K_DATA + 1)
    st.average_lines = int(count[_K_AVG])
    # section headers: one key per distinct column list (as the line loop's batches)
    hdr_rows = df.filter(pl.col("kind") == _K_HEADER).select(
        "line_no", pl.col("_toks").list.slice(pl.col("_nt")).alias("hdr"))
    key_of: dict[tuple[str, ...], int] = {}
    hk = [key_of.setdefault(tuple(hdr), len(key_of)) for hdr in hdr_rows["hdr"].to_list()]
    hdrs = list(key_of)
    if any(h and h[-1] in S.TEXT_COLS for h in hdrs):
        return None  # free-text last column (sar -m USB): surplus words are joined by the line loop
    if not all(is_section_header(h) for h in hdrs):
        return None  # a timed line without numbers that names no column: a bad row, which the line loop reports
    width = max((len(h) for h in hdrs), default=0)
    kind = pl.col("kind")
    # the header in force on every line (reset by a banner), the section clock each header, data and
    # restart line advances (midnight roll-over), times, and the values as columns: one lazy pass
    marks = np.full(df.height, -2, dtype=np.int32)  # line i+1: header key, -1 banner, -2 neither
    marks[hdr_rows["line_no"].to_numpy() - 1] = hk
    if banners:
        marks[np.array([ln for ln, _, _ in banners]) - 1] = -1
    cur = pl.Series("_cur", marks).replace(-2, None).forward_fill()
    tk = pl.when(kind == _K_RESTART).then(-2).otherwise(pl.col("_cur"))
    grp = [pl.col("seg"), pl.col("_tk")]
    # a time more than 3 hours before the latest one so far: only then can a section clock roll over
    timed_kinds = kind.is_in([_K_HEADER, _K_DATA, _K_RESTART])
    secs_t = pl.col("_secs").filter(timed_kinds)
    may_roll = bool(df.select((secs_t.cum_max() - secs_t).max() > _ROLLOVER_S).item())
    if may_roll:
        roll = (pl.col("_secs") < pl.col("_secs").shift(1).over(grp) - _ROLLOVER_S).fill_null(False).cast(pl.Int64)
        off = pl.col("_roll").cum_sum().over(grp) * 86400 + pl.col("_secs")
    else:
        roll, off = pl.lit(0, dtype=pl.Int64), pl.col("_secs")
    j0 = nt if (df["_nt"] > 1).any() else 1  # a constant index when no line has AM/PM
    if len(seg_day) == 1:
        day_us, host = pl.lit(seg_day[0], dtype=pl.Int64), pl.lit(seg_host[0], dtype=pl.String)
    else:
        segs = list(range(len(seg_day)))
        day_us = pl.col("seg").replace_strict(segs, seg_day, default=None, return_dtype=pl.Int64)
        host = pl.col("seg").replace_strict(segs, seg_host, default=None, return_dtype=pl.String)
    hn = (pl.col("_cur").replace_strict(list(range(len(hdrs))), [len(h) for h in hdrs], default=None,
                                        return_dtype=pl.Int32) if hdrs else pl.lit(None, dtype=pl.Int32))
    timed = (df.lazy()
             .with_columns(pl.when(pl.lit(cur) >= 0).then(pl.lit(cur)).alias("_cur"),
                           (kind == _K_BANNER).cum_sum().cast(pl.Int32).alias("seg"))
             .filter(timed_kinds)
             .select("line_no", "text", "_nt", "_secs", "_nrest", "kind", "_cur", "seg",
                     *(toks.list.get(j0 + j, null_on_oob=True).alias(f"t{j}") for j in range(width)))
             .with_columns(tk.alias("_tk"))
             .with_columns(roll.alias("_roll"))
             .with_columns(off.alias("_off"))
             .with_columns(host.alias("host"), (day_us + pl.col("_off") * 1_000_000).alias("_lus"))
             .with_columns(pl.lit(None, dtype=pl.Int64).alias("_xus"),
                           pl.when(pl.col("_lus").is_not_null()).then(pl.lit("local")).alias("_q"),
                           pl.coalesce("_lus", pl.col("_off") * 1_000_000).alias("_key"),
                           pl.lit(None, dtype=pl.Int64).alias("sample_no"),
                           pl.lit(False).alias("since_boot"),
                           (pl.col("_nrest") == hn).alias("_fit"))
             .collect(engine="in-memory"))
    # LINUX RESTART and COM lines: few, in Python
    if count[_K_RESTART]:
        for ln, line, secs_, off, lus_, host_ in timed.filter(kind == _K_RESTART).select(
                "line_no", "text", "_secs", "_off", "_lus", "host").iter_rows():
            m = _NCPU.search(line.strip())
            label = (dt.datetime(1970, 1, 1) + dt.timedelta(microseconds=lus_)).isoformat() if lus_ is not None else \
                f"{secs_ // 3600:02d}:{secs_ // 60 % 60:02d}:{secs_ % 60:02d}"
            extra = (host_, lus_, None, "local" if lus_ is not None else None,
                     lus_ if lus_ is not None else off * 1_000_000, None, False)
            st.restart(ln, extra, int(m.group(1)) if m else None, label)
    if count[_K_COM]:
        for line, n in df.filter(kind == _K_COM).select("text", "_nt").iter_rows():
            st.comments.append(" ".join(line.split()[n + 1:]))
    # data rows: as many values as their header has columns, else unparsed
    bad: list[pl.DataFrame] = []
    data = timed.filter((kind == _K_DATA) & pl.col("_cur").is_not_null())
    attached = data.height
    if data.height and not data["_fit"].all():
        misfit = data.filter(~pl.col("_fit"))
        why = {(nv, k): f"{nv} values for {len(hdrs[k])} columns of section {' '.join(hdrs[k])[:60]!r}"
               for nv, k in set(misfit.select("_nrest", "_cur").iter_rows())}
        reasons = [why[r] for r in misfit.select("_nrest", "_cur").iter_rows()]
        bad.append(misfit.select("line_no", "text").with_columns(pl.Series("reason", reasons, dtype=pl.String)))
        data = data.filter(pl.col("_fit"))
    extra_cols = ["line_no", *S.EXTRA]
    parts = {0: data} if len(hdrs) == 1 else (
        {k[0]: f for k, f in data.partition_by("_cur", as_dict=True, maintain_order=True).items()} if data.height else {})
    for k, hdr in enumerate(hdrs):
        b = st.col.batch(hdr, lambda: _text_batch(hdr))
        rows = parts.get(k)
        if rows is not None and rows.height:
            b.frame = rows.select(*extra_cols, *(f"t{j}" for j in range(len(hdr))))
            b.clean = True
    for kd, reason in ((_K_NOTIME, "not a sar line (no leading time)"), (_K_NOVALS, "time without values")):
        if count[kd]:
            bad.append(df.filter(kind == kd).select("line_no", "text", pl.lit(reason).alias("reason")))
    if count[_K_DATA] > attached:
        orphans = timed.filter((kind == _K_DATA) & pl.col("_cur").is_null())
        bad.append(orphans.select("line_no", "text", pl.lit("sar data row before any column header").alias("reason")))
    tables, rejected = st.col.frames(TABLES, ctx.tz, rank_samples=True)
    if rejected:
        rej = pl.DataFrame({"line_no": [ln for ln, _ in rejected], "reason": [r for _, r in rejected]},
                           schema={"line_no": pl.Int64, "reason": pl.String})
        bad.append(rej.join(lines, on="line_no", how="left").select("line_no", "text", "reason"))
    up = [unparsed_frame(f, pl.col("reason"), ctx, NAME) for f in bad if f.height] or None
    return result(NAME, ctx, lines.height, tables, up, hosts=st.hosts, restarts=st.restarts,
                  comments=st.comments, average_lines=st.average_lines, variant="text", date_order=order,
                  date_order_assumed=assumed, date_source=date_source)

"""parse(): split lines, route each to its reader, extract the message fields, attach continuation
lines to the message they continue, and account for every line."""
from __future__ import annotations

from collections import Counter

import polars as pl

from forensics.layout import MARKER_PREFIX
from forensics.sources._base import ParseContext, ParseResult, result, split_lines, unparsed_frame
from forensics.sources.dmesg.fields import _fields
from forensics.sources.dmesg.prefixes import FACILITIES, LEVELS, RE_DECODE, RE_ISO_FIXED, RE_JOURNAL_HDR, RE_PRI
from forensics.sources.dmesg.readers import (
    NAME,
    _empty_parsed,
    _no_prefix,
    _parse_iso,
    _parse_iso_fixed,
    _ROUTES,
)

_MAIN, _BLANK, _MARKER, _CONT, _DASH = 0, 1, 2, 3, 4  # line kinds


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    lines = split_lines(data)
    n = lines.height
    if n == 0:
        return result(NAME, ctx, 0, {"kernel_log": pl.DataFrame({"line_no": pl.Series([], dtype=pl.Int64)})})
    t = pl.col("text")
    # `dmesg --time-format iso` lines (most big captures: main lines, no -r/-x prefix, iso route) are
    # sliced, not captured; only the other lines are classified and routed
    lines = lines.with_columns(t.str.contains(RE_ISO_FIXED).alias("_fixed"))
    n_fixed = int(lines["_fixed"].sum())
    fixed_out = None
    if n_fixed:
        fixed = lines if n_fixed == n else lines.filter(pl.col("_fixed"))
        fixed_out = _parse_iso_fixed(fixed.select("line_no", t.alias("rest")))
    olines = (lines.filter(~pl.col("_fixed")) if n_fixed else lines).drop("_fixed")
    lines = lines.drop("_fixed")
    kind = (pl.when(t.str.strip_chars() == "").then(pl.lit(_BLANK))
            .when(t.str.starts_with(MARKER_PREFIX)).then(pl.lit(_MARKER))
            .when(t.str.starts_with(" ") | t.str.starts_with("\t")).then(pl.lit(_CONT))
            .when(t.str.starts_with("-- ")).then(pl.lit(_DASH))
            .otherwise(pl.lit(_MAIN)).cast(pl.UInt8))
    olines = olines.with_columns(kind.alias("kind"))
    k = pl.col("kind")
    # what the other lines hold, in one pass: the steps for what they do not hold are skipped
    # (-r "<N>" and -x " :" are looked for in every main line: running their steps on lines without
    # them changes nothing, so the text of a main line is as good as its rest here)
    flags = olines.select(
        (k != _MAIN).any().alias("other"), (k == _DASH).any().alias("dash"), (k == _CONT).any().alias("cont"),
        (t.str.starts_with("<") & (k == _MAIN)).any().alias("pri"),
        (t.str.contains(" :", literal=True) & (k == _MAIN)).any().alias("decode"),
    ).row(0, named=True)
    unparsed = []
    if flags["dash"]:
        dash = olines.filter(k == _DASH)
        hdr = dash["text"].str.contains(RE_JOURNAL_HDR)
        unparsed.append(_no_prefix(dash.filter(~hdr), ctx))
    main = (olines.filter(k == _MAIN) if flags["other"] else olines).select("line_no", "text")

    # -r: "<N>" raw priority; -x: "kern  :warn  : " decoded facility/level
    main = main.with_columns(pl.col("text").alias("rest"), pl.lit(None, dtype=pl.Int32).alias("pri"))
    if flags["pri"]:
        pri = pl.col("text").str.extract(RE_PRI, 1).cast(pl.Int32, strict=False)
        main = main.with_columns(pl.when(pri <= 191).then(pri).alias("pri"))
        main = main.with_columns(pl.when(pl.col("pri").is_not_null())
                                 .then(pl.col("text").str.replace(RE_PRI, "")).otherwise(pl.col("text")).alias("rest"))
    if flags["decode"]:
        main = main.with_columns(pl.col("rest").str.extract_groups(RE_DECODE).alias("_d")).unnest("_d")
        valid = (pl.col("dfac").is_in(list(FACILITIES)) & pl.col("dlvl").is_in(list(LEVELS))).fill_null(False)
        main = main.with_columns(pl.when(valid).then(pl.col("dfac")).alias("dfac"),
                                 pl.when(valid).then(pl.col("dlvl")).alias("dlvl"))
        main = main.with_columns(pl.when(pl.col("dfac").is_not_null())
                                 .then(pl.col("rest").str.replace(RE_DECODE, "")).otherwise(pl.col("rest")).alias("rest"))
    else:
        main = main.with_columns(pl.lit(None, dtype=pl.String).alias("dfac"), pl.lit(None, dtype=pl.String).alias("dlvl"))

    # the other lines are routed by their first character
    first = pl.col("rest").str.slice(0, 1)
    route = (pl.when(first == "[").then(pl.lit("["))
             .when(first.str.contains("^[0-9]")).then(pl.lit("digit"))
             .when(first.str.contains("^[A-Z]")).then(pl.lit("upper"))
             .otherwise(pl.lit("none")))
    main = main.with_columns(route.alias("route"))
    parsed = []
    variants: Counter = Counter()
    for key, parsers in _ROUTES:
        sub = main.filter(pl.col("route") == key).drop("route") if main.height else main.drop("route")
        for fn in parsers:
            got = 0
            if fn is _parse_iso and fixed_out is not None:
                parsed.append(fixed_out)
                got += fixed_out.height
            if sub.height:
                out, sub = fn(sub, ctx)
                if out.height:
                    parsed.append(out)
                    got += out.height
            if got:
                variants[fn.__name__[7:]] += got
        if sub.height:
            unparsed.append(_no_prefix(sub, ctx))
    rest = main.filter(pl.col("route") == "none")
    unparsed.append(_no_prefix(rest, ctx))

    if parsed:
        rows = pl.concat(parsed, how="vertical").sort("line_no")
        if flags["pri"] or flags["decode"]:
            pri = pl.col("pri")
            rows = rows.with_columns(
                pl.coalesce(pl.col("dfac"), pri.floordiv(8).replace_strict(dict(enumerate(FACILITIES)), default=None,
                                                                            return_dtype=pl.String),
                            pl.col("facility")).alias("facility"),
                pl.coalesce(pl.col("dlvl"), pri.mod(8).replace_strict(dict(enumerate(LEVELS)), default=None,
                                                                       return_dtype=pl.String),
                            pl.col("level")).alias("level"),
            )
        rows = rows.drop("pri", "dfac", "dlvl")  # (all null without -r/-x prefixes)
        if rows["bad"].null_count() < rows.height:
            bad = rows.filter(pl.col("bad").is_not_null())
            txt = lines.select("line_no", "text")
            unparsed.append(unparsed_frame(bad.join(txt, on="line_no", how="left").select("line_no", "text", "bad"),
                                           pl.col("bad"), ctx, NAME))
            rows = rows.filter(pl.col("bad").is_null())
        rows = rows.drop("bad")
    else:
        rows = _empty_parsed().drop("bad", "pri", "dfac", "dlvl")
    rows = _fields(rows)

    # continuation lines: rows of the message they follow
    cont = olines.filter(k == _CONT).select("line_no", "text") if flags["cont"] else None
    if cont is not None and cont.height:
        keep = ["ts", "ts_quality", "boot_s", "facility", "level", "subsystem", "pci_addr", "iface", "host_c"]
        heads = rows.select("line_no", *keep).with_columns(pl.col("line_no").alias("_head"))
        c = cont.sort("line_no").join_asof(heads.sort("line_no"), on="line_no", strategy="backward")
        orphan = c.filter(pl.col("_head").is_null())
        unparsed.append(unparsed_frame(orphan.select("line_no", "text"),
                                       "continuation line without a preceding message", ctx, NAME))
        c = c.filter(pl.col("_head").is_not_null()).with_columns(
            pl.col("text").str.strip_chars_start().alias("message"),
            pl.lit(None, dtype=pl.String).alias("raw_time"),
            pl.lit(None, dtype=pl.String).alias("ident"),
            pl.lit(None, dtype=pl.Int32).alias("xid"),
            pl.lit(None, dtype=pl.String).alias("xid_text"),
        ).select(rows.columns)
        rows = pl.concat([rows, c]).sort("line_no")
        variants["continuation"] += c.height

    hosts = sorted(h for h in rows["host_c"].unique().to_list() if h)
    host_expr = pl.lit(ctx.host, dtype=pl.String) if ctx.host else pl.col("host_c")
    table = rows.select(
        host_expr.alias("host"), "line_no", "ts", "ts_quality", "boot_s", "raw_time", "facility", "level",
        "subsystem", "pci_addr", "iface", "xid", "xid_text", "message",
    )
    meta = {"hosts": hosts}
    main_variants = {k: v for k, v in variants.items() if k != "continuation"}
    if main_variants:
        meta["variant"] = max(main_variants, key=main_variants.get)
    return result(NAME, ctx, n, {"kernel_log": table}, [u for u in unparsed if u.height], **meta)

"""parse(): NCCL candidate lines through the header paths, classification and rules; PyTorch lines; the
rest to unparsed; the final nccl_log and nccl_config tables and the variant name."""
from __future__ import annotations

import functools

import polars as pl

from forensics import schema
from forensics.sources._base import ParseContext, ParseResult, result, unparsed_frame
from forensics.sources.nccl import patterns
from forensics.sources.nccl.patterns import NAME, _compact
from forensics.sources.nccl.lines import read_lines
from forensics.sources.nccl.header import _fast, _slow, _strip_launcher
from forensics.sources.nccl.classify import _classify_gated
from forensics.sources.nccl.config import _by_message, _rules_gated
from forensics.sources.nccl.watchdog import _torch_rows
from forensics.sources.nccl.perf_tests import perf_rows
from forensics.sources import _rank_places as rank_places
from forensics.sources import _runtime_log as runtime_log
from forensics.sources.nccl.desync import desync_rows
from forensics.sources.nccl.unparsed import CONTEXT, CONTEXT_REASONS, _other_reasons
from forensics.sources.nccl.wrapped import WRAPPED, join_wrapped


def _nccl_rows(c: pl.DataFrame, ctx: ParseContext, ascii_all: bool) -> tuple[pl.DataFrame, pl.DataFrame, list[pl.DataFrame]]:
    """NCCL candidate lines -> (nccl_log rows, lines rejected, nccl_config frames)."""
    text = pl.col("text")
    if ascii_all:  # lines without " NCCL " or starting with "NCCL " fail the fast header and its retry anyway
        fast_in, slow_in = c, c.clear()
    else:  # byte offsets equal character offsets only on ASCII rows
        fast_mask = (text.str.contains(" NCCL ", literal=True) & ~text.str.starts_with("NCCL ")
                     & (text.str.len_bytes() == text.str.len_chars()))
        mask = c.select(fast_mask.fill_null(False)).to_series()
        fast_in, slow_in = c.filter(mask), c.filter(~mask)
    parts, rejected = [], c.clear().select("line_no", "text")
    if fast_in.height:
        good, ok = _fast(fast_in)
        parts.append(good)
        if not ok.all():
            retry = fast_in.filter(~ok)
            retry = _compacted(retry)
            # a launcher prefix (or NCCL's stamp) starts with a digit, "[" or a space: other lines go straight on
            may = retry.select(pl.col("text").str.contains(r"^[\[ 0-9]").fill_null(False)).to_series()
            if may.any():
                good2, left = _strip_launcher(retry.filter(may) if not may.all() else retry, ctx)
                parts.append(good2)
                retry = pl.concat([left, retry.filter(~may)]) if not may.all() else left
            slow_in = pl.concat([slow_in, retry]) if slow_in.height else retry
    if slow_in.height:
        good3, rejected = _slow(_compacted(slow_in), ctx)
        parts.append(good3)
    parts = [p for p in parts if p.height]
    if not parts:
        return c.clear().select("line_no"), rejected, []
    parts = [p.select(_part_columns(tuple(p.columns))) for p in parts]
    df = parts[0]
    if len(parts) > 1:  # one chunk first: sorting (gathering) chunked string columns costs several times more
        df = pl.concat([df] + [p if p.schema == df.schema else p.cast(df.schema) for p in parts[1:]],
                       rechunk=True).sort("line_no")
    if df.height <= patterns.LEAN_ROWS:  # (read at call time: tests set it)
        df, cfg = _rules_gated(_classify_gated(df.with_columns(pl.col("prefix_rank").alias("rank"))))
    else:
        df, cfg = _by_message(df.with_columns(pl.col("prefix_rank").alias("rank")), ascii_all)
    return df, rejected, cfg


def _compacted(lines: pl.DataFrame) -> pl.DataFrame:
    """`lines` with its text in one buffer of its own: the rows a filter left point into the whole input's buffers, and
    each of the several passes the readers make over them would wait on memory (the 17,000 lines of the 20 MB benchmark
    log that no NCCL header starts: the readers after the NCCL one 58 -> 49 CPU ms, the copy 1.1)."""
    return lines.with_columns(_compact(lines.get_column("text"))) if lines.height > COMPACT_ROWS else lines


COMPACT_ROWS = 1024  # (a small frame's few passes gain less than the copy's fixed cost)


_PART_COLS = {"line_no": pl.Int64, "host": pl.String, "pid": pl.Int64, "tid": pl.Int64, "cuda_dev": pl.Int32,
              "level": pl.String, "message": pl.String, "src_file": pl.String, "src_func": pl.String,
              "src_line": pl.Int32, "prefix_rank": pl.Int32, "prefix": pl.String, "ts_exact": pl.Datetime("us", "UTC"),
              "ts_local": pl.Datetime("us", "UTC")}


@functools.lru_cache(maxsize=64)
def _part_columns(columns: tuple[str, ...]) -> list[pl.Expr]:
    """The columns every part of NCCL rows has, in one order (typed nulls where a path has none)."""
    return [pl.col(c) if c in columns else _null_col(c, t) for c, t in _PART_COLS.items()]


@functools.lru_cache(maxsize=None)
def _null_col(name: str, dtype: pl.DataType) -> pl.Expr:
    return pl.lit(None, dtype=dtype).alias(name)

# lines that may be nccl-tests output (one literal pass; perf_rows' regexes only run when one does)
_PERF_GATE = pl.col("text").str.contains_any(["nThread", "Avg bus", "Rank", "out-of-place", "Out of bounds",
                                              "Using devices", "(B)", "size", " sum ", " none ", " max ", " min ",
                                              " prod ", " avg ", " premulsum ", "#", "Test ",
                                              # result lines of old all_gather_perf, which print no redop
                                              " float ", " double ", " half ", " int8 ", " uint8 ", " int32 ",
                                              " uint32 ", " int64 ", " uint64 ", " bfloat16 ",
                                              "--|"]).fill_null(False)  # a Markdown table's rule
_NC_COND = pl.col("text").str.contains("NCCL ", literal=True).fill_null(False)
# lines holding "NCCL", "atchdog", "terminate called after throwing" or "what():" (one pass: a literal contains per
# word costs more than this alternation)
_PT_COND = pl.col("text").str.contains(r"NCCL|atchdog|terminate called after throwing|what\(\):").fill_null(False)


# an SGR colour code as it reaches a paste: the escape byte itself, written out by a tool or a person (``^[``,
# ``\x1b``, ``\033``, ``\e``, ``\u001b``, ``ESC`` as less and some issue templates show it), replaced by U+FFFD
# (a web page), or lost (``[36m``: digits needed)
RE_COLOUR = r"(?:\x1b|ESC|\^\[|\\x1[bB]|\\033|\\e|\\u001[bB]|\x{FFFD})?\[[0-9]{1,3}(?:;[0-9]{1,3}){0,4}m"


def strip_colour(lines: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """`lines` without SGR colour codes (:data:`RE_COLOUR`), and how many lines had one."""
    t = pl.col("text")
    has = t.str.contains(RE_COLOUR).fill_null(False)
    n = int(lines.select(has.sum()).item())
    if not n:
        return lines, 0
    return lines.with_columns(pl.when(has).then(t.str.replace_all(RE_COLOUR, "")).otherwise(t).alias("text")), n


# (the first such line carries Ray's note after the mark: "(Ray deduplicates logs by default. ... for more options.)")
_RAY_DEDUP = r" \[repeated [0-9]{1,9}x across cluster\](?:\s*\(Ray deduplicates logs.*)?\s*$"
# the mark cut by a terminal or a paste at its blank: " [repeated 4x across" at the end of an NCCL line, the next
# line "cluster]" (with the rest of Ray's note "(Ray deduplicates logs by default. ...)" or its start)
_RAY_DEDUP_HEAD = r" \[repeated [0-9]{1,9}x(?: across)?\s*$"
_RAY_DEDUP_TAIL = r"^\s*(?:across\s+)?cluster\](?:\s*\(Ray deduplicates logs.*)?\s*$"
# the note cut by a wrap (in its URL, say): the line after holds only the rest of it, up to "for more options.)"
_RAY_NOTE_OPEN = r"\(Ray deduplicates logs"
_RAY_NOTE_REST = r"^\S[^ ]*(?: [^ ]+){0,12} ?for more options\.\)\s*$"
RAY_NOTE = "the rest of Ray's dedup mark or note ([repeated Nx across cluster] (Ray deduplicates logs ...)) cut onto its own line"


def strip_ray_dedup(lines: pl.DataFrame) -> tuple[pl.DataFrame, int]:
    """`lines` whose NCCL lines (" NCCL " in them) end in Ray's log dedup mark (``[repeated 14x across cluster]``:
    the line stands for that many alike across the cluster) without it, and how many; other programs' lines keep it
    (the runtime_log reader takes it into ``repeated``)."""
    t = pl.col("text")
    # (the literal test over all lines, the rest on the few that pass it)
    idx = lines.select(t.str.contains("x across cluster]", literal=True).fill_null(False).arg_true()).to_series()
    if not idx.len():
        return lines, 0
    sub = lines.select("text")[idx].with_columns(idx.alias("_i")).filter(
        t.str.contains(" NCCL ", literal=True) & t.str.contains(_RAY_DEDUP))
    if not sub.height:
        return lines, 0
    text = lines.get_column("text").scatter(sub.get_column("_i"), sub.select(t.str.replace(_RAY_DEDUP, "")).to_series())
    return lines.with_columns(text), sub.height


def join_ray_dedup(lines: pl.DataFrame) -> tuple[pl.DataFrame, int, list[int]]:
    """`lines` whose NCCL lines end in the first words of Ray's dedup mark (`` [repeated 4x across``) continued on
    the next line (``cluster]``) without the mark, that next line emptied; (lines, how many, the emptied lines'
    numbers: counted by the caller, not lost).

    Two literal passes over all lines find the few that may start a cut mark or note; the patterns then run on
    those and the line after each only (a 40 MB benchmark log holds 2,109 marks in 357,000 lines)."""
    t = pl.col("text")
    text = lines.get_column("text")
    cand = lines.select(t.str.contains(" [repeated ", literal=True).fill_null(False).arg_true()).to_series()
    hit = _with_next(text, cand).select(
        (t.str.contains(" NCCL ", literal=True) & t.str.contains(_RAY_DEDUP_HEAD)
         & pl.col("_next").str.contains(_RAY_DEDUP_TAIL)).fill_null(False)).to_series()
    idx = cand.filter(hit)
    if idx.len():
        text = text.scatter(idx, text.gather(idx).str.replace(_RAY_DEDUP_HEAD, ""))
    # the note after a whole mark cut by a wrap: its rest alone on the next line
    open_ = lines.select(t.str.contains("(Ray deduplicates logs", literal=True).fill_null(False).arg_true()).to_series()
    cut = _with_next(lines.get_column("text"), open_).select(
        (~t.str.contains("for more options.)", literal=True) & pl.col("_next").str.contains(_RAY_NOTE_REST)
         & ~pl.col("_next").str.contains(" NCCL ", literal=True)).fill_null(False)).to_series()
    rest = open_.filter(cut) + 1
    gone = pl.concat([idx + 1, rest]).unique().sort()
    if not gone.len():
        return lines, 0, []
    text = text.scatter(gone, pl.Series([""] * gone.len(), dtype=pl.String))
    return lines.with_columns(text), idx.len(), (lines.get_column("line_no")[gone]).to_list()


def _with_next(text: pl.Series, idx: pl.Series) -> pl.DataFrame:
    """The lines at `idx` (``text``) beside the line after each (``_next``; null after the last line)."""
    nxt = idx + 1
    after = text.gather(nxt.filter(nxt < text.len()))
    return pl.DataFrame([text.gather(idx).alias("text"),
                         after.extend(pl.Series([None] * (idx.len() - after.len()), dtype=pl.String)).alias("_next")])


def parse(data: bytes, ctx: ParseContext) -> ParseResult:
    """Parse NCCL debug output, PyTorch NCCL watchdog lines and nccl-tests output into nccl_log, nccl_config and
    nccl_tests."""
    lines = read_lines(data)
    n = lines.height
    original, coloured, deduped = None, 0, 0
    # colour codes as pasted (Ray's cyan worker prefix, its "[0m" reset after it): read without them (a polars
    # literal scan: Python's `in` crawls through NCCL's many "[" looking for "[0m")
    if n and lines.select(pl.col("text").str.contains("[0m", literal=True).any()).item():
        original, lines, coloured = lines, *strip_colour(lines)
    cut_notes: list[int] = []
    if b"cluster]" in data and b"[repeated " in data:  # Ray's dedup mark or its note cut by a wrap: joined first
        original = original if original is not None else lines
        lines, deduped, cut_notes = join_ray_dedup(lines)
    if b"x across cluster]" in data:  # Ray's log dedup mark on NCCL lines: not part of the NCCL message
        original = original if original is not None else lines
        lines, k = strip_ray_dedup(lines)
        deduped += k
    tails: list[int] = []
    if b"ProcessGroupNCCL" in data or b"what():" in data or b"frame #" in data or b"Watchdog caught" in data:
        # PyTorch records wrapped by a runner, a terminal or an author: joined (wrapped.py)
        joined, tails = join_wrapped(lines)
        if tails:
            original, lines = (original if original is not None else lines), joined
    if n == 0:
        return result(NAME, ctx, 0, {"nccl_log": schema.empty("nccl_log"), "nccl_config": schema.empty("nccl_config"),
                                     "nccl_tests": schema.empty("nccl_tests"), "nccl_desync": schema.empty("nccl_desync"),
                                     "rank_hosts": schema.empty("rank_hosts"), "runtime_log": schema.empty("runtime_log")},
                      None, hosts=[], variant="empty")
    is_nc = lines.select(_NC_COND).to_series()
    nc, rest = lines.filter(is_nc), _compacted(lines.filter(~is_nc))
    log_parts, cfg, rows, trows = [], [], None, None
    if nc.height:
        rows, bad, cfg = _nccl_rows(nc, ctx, data.isascii())
        log_parts.append(rows)
        rest = pl.concat([rest, bad]) if bad.height else rest
    if rest.height:
        is_pt = rest.select(_PT_COND).to_series()
        if is_pt.any():
            trows, tbad = _torch_rows(rest.filter(is_pt), ctx)
            if trows.height:
                log_parts.append(trows.sort("line_no"))
            rest = pl.concat([rest.filter(~is_pt), tbad])
    perf = None
    gate = rest.select(_PERF_GATE).to_series() if rest.height else None
    if gate is not None and gate.any():  # nccl-tests header, result table and summary lines
        perf, left = perf_rows(rest.filter(gate) if not gate.all() else rest)
        rest = pl.concat([rest.filter(~gate), left]) if not gate.all() else left
        perf = perf.sort("line_no") if perf.height else None
    desync = places = None
    if rest.height:  # the desync report's tab-indented lines after a watchdog error
        desync, rest = desync_rows(rest)
    if rest.height:  # torchrun's failure summary at the end of a job's stdout: where each failed rank ran
        places, used = rank_places.read(rest, ctx)
        rest = rest.filter(~pl.col("line_no").is_in(list(used))) if used else rest
    runtime = None
    if rest.height:  # the records of the programs around NCCL (vLLM, Ray, torchrun, PyTorch logging)
        runtime, rest = runtime_log.read(rest, ctx)
    unparsed = _other_reasons(rest)[1] if rest.height else None
    context = 0
    if unparsed is not None and unparsed.height:
        # the stack frames and traceback an error was raised on (the watchdog's, a collective's): its context
        is_ctx = unparsed.get_column("reason").is_in(CONTEXT_REASONS)
        context = int(is_ctx.sum())
        unparsed = unparsed.filter(~is_ctx) if context else unparsed

    log = _finish_log(log_parts)
    cut_hosts = 0
    if unparsed is not None and unparsed.height and log.height:  # lines cut into by another process's output
        log, unparsed, cfg, cut_hosts = _cut_hosts(log, unparsed, cfg, lines)
    cfg = [c for c in cfg if c.height]
    if not cfg:
        cfg_df = schema.empty("nccl_config").select("line_no", "host", "pid", "rank", "cuda_dev", "key", "value")
    else:
        cfg_df = pl.concat(cfg, how="vertical_relaxed") if len(cfg) > 1 else cfg[0]
        cfg_df = cfg_df.sort("line_no", maintain_order=True)
    hosts = sorted(h for h in log.get_column("host").unique().to_list() if h) if log.height else []
    variant = _variant(rows, trows)
    if perf is not None:
        variant = "nccl-tests" if variant == "no-nccl-lines" else variant + "+nccl-tests"
    if original is not None and unparsed is not None and unparsed.height:  # unparsed lines as the file has them
        unparsed = unparsed.drop("text").join(original.select("line_no", "text"), on="line_no", how="left")
    up = unparsed_frame(unparsed, pl.col("reason"), ctx, NAME) if unparsed is not None and unparsed.height else None
    extra = {"colour_codes": coloured} if coloured else {}
    if deduped:
        extra["ray_deduplicated"] = deduped  # NCCL lines that stand for N across the cluster (Ray's mark taken off)
    skipped = {RAY_NOTE: len(cut_notes), WRAPPED: len(tails), CONTEXT: context}
    if any(skipped.values()):
        extra["skipped"] = {k: v for k, v in skipped.items() if v}
    if cut_hosts:
        extra["cut_hosts_joined"] = cut_hosts  # a host cut by another process's line, read whole from the line before
    return result(NAME, ctx, n, {"nccl_log": log, "nccl_config": cfg_df,
                                     "nccl_tests": perf if perf is not None else schema.empty("nccl_tests"),
                                     "nccl_desync": desync if desync is not None else schema.empty("nccl_desync"),
                                     "rank_hosts": places if places is not None and places.height else schema.empty("rank_hosts"),
                                     "runtime_log": runtime if runtime is not None else schema.empty("runtime_log")},
                  up, hosts=hosts, variant=variant, **extra)


# a worker prefix and the first letters of a host, the rest of the line lost to another process's output (Ray and
# vLLM workers write to one stream: "(RayWorkerVllm pid=4098) gpu-no" then "de-1:4098:4098 [3] NCCL INFO ...")
_CUT_HEAD = r"^\s*\([^()]{1,120}\)\s+([A-Za-z0-9][A-Za-z0-9._-]{0,62})\s*$"
CUT_HOST = "NCCL line whose host was cut by another process's output (its first letters end the line before)"


def _cut_hosts(log: pl.DataFrame, unparsed: pl.DataFrame, cfg: list[pl.DataFrame], lines: pl.DataFrame):
    """Rows of NCCL lines that follow an unparsed line ending in a worker prefix and a host's first letters: where
    those letters and the row's host make a host the file names elsewhere, the row takes it (the unparsed line
    stays unparsed); where they make none, the row is not trusted (a wrong host): its line goes to unparsed with
    :data:`CUT_HOST`. Returns (log, unparsed, cfg, rows whose host was joined)."""
    heads = unparsed.select(pl.col("line_no") + 1, pl.col("text").str.extract(_CUT_HEAD, 1).alias("_frag")) \
        .filter(pl.col("_frag").is_not_null())
    if not heads.height:
        return log, unparsed, cfg, 0
    # (only a line that starts with its host continues the cut one: a line with its own worker prefix is whole)
    bare = lines.join(heads, on="line_no", how="inner").filter(~pl.col("text").str.contains(r"^\s*\(")).select("line_no", "_frag")
    cut = log.join(bare, on="line_no", how="inner").select("line_no", "host", "_frag")
    if not cut.height:
        return log, unparsed, cfg, 0
    known = set(log.filter(~pl.col("line_no").is_in(cut.get_column("line_no").implode())).get_column("host").drop_nulls().to_list())
    joined = {ln: f + h for ln, h, f in cut.iter_rows() if h is not None and f + h in known}
    drop = [ln for ln in cut.get_column("line_no").to_list() if ln not in joined]
    if joined:
        fix = pl.DataFrame({"line_no": list(joined), "_host": list(joined.values())},
                           schema={"line_no": log.schema["line_no"], "_host": pl.String})
        log = log.join(fix, on="line_no", how="left").with_columns(
            pl.coalesce("_host", "host").alias("host")).drop("_host")
        cfg = [c.join(fix, on="line_no", how="left").with_columns(pl.coalesce("_host", "host").alias("host")).drop("_host")
               if c.height and "host" in c.columns else c for c in cfg]
    if drop:
        gone = pl.Series(drop, dtype=log.schema["line_no"]).implode()
        lost = lines.filter(pl.col("line_no").is_in(gone)).select("line_no", "text", pl.lit(CUT_HOST).alias("reason"))
        log = log.filter(~pl.col("line_no").is_in(gone))
        cfg = [c.filter(~pl.col("line_no").is_in(gone)) if c.height else c for c in cfg]
        unparsed = pl.concat([unparsed, lost.select(unparsed.columns).cast(unparsed.schema)]).sort("line_no")
    return log, unparsed, cfg, len(joined)


_LOG_TYPES = {c: t for c, t in schema.polars_schema("nccl_log").items() if c not in ("source", "file")}
_LOG_NULLS = {c: pl.lit(None, dtype=t).alias(c) for c, t in _LOG_TYPES.items()}


@functools.lru_cache(maxsize=64)
def _log_select(columns: tuple[str, ...], ts_known: bool) -> list[pl.Expr]:
    """The nccl_log columns of a part: its own where it has them, typed nulls where not; ts and ts_quality from
    the exact (RFC 3339) and local stamps."""
    utc = pl.Datetime("us", "UTC")
    exact, local = (pl.col(c) if c in columns else pl.lit(None, dtype=utc) for c in ("ts_exact", "ts_local"))
    if ts_known:
        ts = [pl.coalesce(exact, local).alias("ts"),
              pl.when(exact.is_not_null()).then(pl.lit("exact")).when(local.is_not_null()).then(pl.lit("local"))
              .otherwise(pl.lit("none")).alias("ts_quality")]
    else:
        ts = [_LOG_NULLS["ts"], pl.lit("none").alias("ts_quality")]
    own = {c: pl.col(c) for c in columns if c in _LOG_TYPES}
    return [dict(zip(("ts", "ts_quality"), ts)).get(c, own.get(c, _LOG_NULLS[c])) for c in _LOG_TYPES]


def _finish_log(parts: list[pl.DataFrame]) -> pl.DataFrame:
    """Final nccl_log columns: NCCL rows, then PyTorch rows, each part in line order (not interleaved: no copy)."""
    if not parts:
        return schema.empty("nccl_log").drop("source", "file")
    out = None
    for df in parts:
        known = any(c in df.columns and df.get_column(c).null_count() < df.height for c in ("ts_exact", "ts_local"))
        df = df.select(_log_select(tuple(df.columns), known))
        out = df if out is None else pl.concat([out, df.cast(out.schema)])
    return out


_NCCL_LEVELS = ["INFO", "WARN", "TRACE", "CALL", "ABORT", "ATTN", "VERSION"]
_TORCH_KINDS = ["watchdog_timeout", "watchdog_exception", "terminate", "exception_raised"]
_TORCH_FACTS = [pl.col("level").is_in(_NCCL_LEVELS).any().alias("nccl"),
                (pl.col("level").is_in(["ERROR", "FATAL"]) | pl.col("kind").is_in(_TORCH_KINDS)).any().alias("pytorch"),
                pl.col("ts_exact").is_not_null().any().alias("rfc3339"),
                pl.col("prefix").is_not_null().any().alias("prefixed")]


def _variant(nccl: pl.DataFrame | None, torch: pl.DataFrame | None) -> str:
    """Short name of what the input held: nccl, pytorch, rfc3339 stamps, launcher prefixes. NCCL rows always carry
    an NCCL level and never a PyTorch level or kind, so their facts come from null counts."""
    facts = dict.fromkeys(("nccl", "pytorch", "rfc3339", "prefixed"), False)
    if nccl is not None and nccl.height:
        facts.update(nccl=True, rfc3339=nccl.get_column("ts_exact").null_count() < nccl.height,
                     prefixed=nccl.get_column("prefix").null_count() < nccl.height)
    if torch is not None and torch.height:
        for k, v in torch.select(_TORCH_FACTS).row(0, named=True).items():
            facts[k] = facts[k] or bool(v)
    if not any(df is not None and df.height for df in (nccl, torch)):
        return "no-nccl-lines"
    return "+".join(k for k, v in facts.items() if v) or "other"

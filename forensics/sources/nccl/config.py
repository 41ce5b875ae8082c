"""Applying the rules: once per distinct message on big inputs (_by_message), gated on the whole frame on
small ones (_rules_gated); both yield the same nccl_log fields and nccl_config rows."""
from __future__ import annotations

import functools

import polars as pl
from forensics.sources.nccl.patterns import _INT, _collect, _compact, _nulls
from forensics.sources.nccl.classify import _classify
from forensics.sources.nccl.rules import _CFG_COLS, _ROW_FIELDS, _ROW_FIELD_INPUTS, _RULES, _RULE_INPUTS


def _cfg_rows(df):
    """nccl_config rows with a key and a non-empty value."""
    v = pl.col("value")
    return df.filter(pl.col("key").is_not_null() & v.is_not_null() & (v != ""))


def _rules_by_kind(df: pl.DataFrame, ascii_only: bool) -> tuple[pl.DataFrame, pl.DataFrame | None]:
    """Big inputs, on (message, kind) rows: each rule on the rows of its kinds, written back with one scatter per
    column; nccl_config (_r: row, key, value) of all rules from one lazy query, spec after spec."""
    pieces: dict[str, list[tuple[pl.Series, pl.Series]]] = {}  # column -> (row positions, values), written once
    groups = df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_r"), "kind").group_by("kind").agg("_r")
    rows_of = dict(zip(groups.get_column("kind").to_list(), groups.get_column("_r")))  # kind -> row positions
    present = set(rows_of)
    branches = []
    for rule, inputs in zip(_RULES[ascii_only], _RULE_INPUTS[ascii_only]):
        kinds = [k for k in rule.kinds if k in present]
        if not kinds:
            continue
        idx = pl.concat([rows_of[k] for k in kinds]) if len(kinds) > 1 else rows_of[kinds[0]]
        if rule.warn_only:  # messages some WARN row has
            idx = idx.filter(df.get_column("_warn").gather(idx))
            if idx.len() == 0:
                continue
        sub = df.select(inputs).gather(idx)
        for stage in rule.stages:
            sub = sub.with_columns([e.alias(name) for name, e in stage])
        for col in rule.out:
            pieces.setdefault(col, []).append((idx, sub.get_column(col)))
        specs = [s for s in rule.cfg if s.kinds is None or present.intersection(s.kinds)]
        if specs:
            lf = sub.with_columns(idx.alias("_r")).lazy()
            for spec in specs:
                cond = spec.cond()
                q = (lf if cond is None else lf.filter(cond)).select(
                    "_r", spec.key.alias("key"), spec.value.alias("value"))
                branches.append(_cfg_rows(q.explode("value") if spec.many else q))
    cols = []
    for col, parts in pieces.items():
        idx = pl.concat([i for i, _ in parts])
        vals = pl.concat([v.cast(_INT.get(col, v.dtype)) for _, v in parts]).alias(col)
        cols.append(_nulls(col, vals.dtype, df.height).scatter(idx, vals))
    df = df.with_columns(cols)
    if not branches:
        return df, None
    return df, pl.concat(branches).collect(optimizations=pl.QueryOptFlags.none())  # the optimizer costs more here


def _by_message(df: pl.DataFrame, ascii_only: bool) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """Big inputs: kinds and rules once per distinct message (a log repeats its messages across ranks, channels
    and steps), then per row: the kind (CALL/ABORT levels turn "other" into nccl_call/abort, whose rows take
    nothing from the rules), the message's fields, _ROW_FIELDS, and its nccl_config rows."""
    # distinct messages in the order of their first row: the passes over them then walk the input's buffers forward
    g = (df.select(pl.int_range(pl.len(), dtype=pl.UInt32).alias("_r"), "message")
         .group_by("message", maintain_order=True).agg("_r"))
    rows = g.get_column("_r")
    code = pl.repeat(0, df.height, dtype=pl.UInt32, eager=True).scatter(
        rows.explode(), pl.int_range(g.height, dtype=pl.UInt32, eager=True).repeat_by(rows.list.len()).explode())
    u = g.select(_compact(g.get_column("message")))  # (one contiguous copy: the rules walk these strings many times)
    u = u.with_columns(_classify(u.with_columns(pl.lit(None, dtype=pl.String).alias("level"))),
                       pl.repeat(False, u.height, eager=True).scatter(
                           code.filter(df.get_column("level") == "WARN"), True).alias("_warn"))
    u, cfg = _rules_by_kind(u, ascii_only)
    found = [c for c in u.columns if c not in ("message", "_warn", "kind") and u.get_column(c).null_count() < u.height]
    per_row = u.select("kind", *found).gather(code)  # columns no message filled stay absent (typed nulls below)
    lvl, k = pl.col("level"), pl.col("kind")
    same = ~((k == "other") & lvl.is_in(["CALL", "ABORT"])).fill_null(False)  # the row keeps its message's kind
    df = df.hstack(per_row).with_columns(
        pl.when(same).then(k).when(lvl == "CALL").then(pl.lit("nccl_call")).otherwise(pl.lit("abort")).alias("kind"),
        same.alias("_same"))
    df = df.with_columns([e for c, e in _ROW_FIELD_INPUTS.items() if c not in df.columns])
    df = df.with_columns(_ROW_FIELDS)
    if cfg is None:
        return df, []
    # each config row of a message, for every row of that message that keeps its kind (spec order kept)
    cfg = cfg.with_columns(rows.gather(cfg.get_column("_r")).alias("_row")).explode("_row")
    if not df.get_column("_same").all():
        cfg = cfg.filter(df.get_column("_same").gather(cfg.get_column("_row")))
    return df, [df.select(_CFG_COLS).gather(cfg.get_column("_row")).hstack(cfg.select("key", "value"))]


def _rules_gated(df: pl.DataFrame) -> tuple[pl.DataFrame, list[pl.DataFrame]]:
    """Small inputs: the rules of the kinds present, at once on the whole frame, each expression gated by its
    rule's rows (values equal to _by_message's), then _ROW_FIELDS. nccl_config: a (key, value) column pair per
    spec with rows (the specs of net prefixes, one per row at most, share pairs by position), unpivoted spec after
    spec, sorted by (line, spec)."""
    kinds = frozenset(df.get_column("kind").unique().to_list())
    rules = tuple(i for i, r in enumerate(_RULES[False]) if kinds.intersection(r.kinds))
    lf = df.lazy()
    for stage in _gated_stages(rules, tuple(df.columns)):
        lf = lf.with_columns(stage)
    df = _collect(lf.with_columns(_ROW_FIELDS), 0)
    if not rules:
        return df, []
    nks = frozenset(df.get_column("_nk").unique().to_list()) if "_nk" in df.columns else frozenset()
    scalar, many = _gated_cfg(rules, kinds, nks)
    if not (scalar or many):
        return df, []
    # (key, value) column pairs, unpivoted spec after spec; list values exploded; sorted by (line, spec)
    wide = df.select(*_CFG_COLS, *[e for pair in scalar + many for e in pair]).lazy()
    parts = []
    for pairs in (scalar, many):
        if pairs:
            names = [(k.meta.output_name(), v.meta.output_name()) for k, v in pairs]
            keys = wide.unpivot([k for k, _ in names], index=list(_CFG_COLS), variable_name="_s", value_name="key")
            vals = wide.unpivot([v for _, v in names], index=[], variable_name="_v", value_name="value").drop("_v")
            part = pl.concat([keys, vals], how="horizontal")
            parts.append(part.explode("value") if pairs is many else part)
    cfg = _cfg_rows(pl.concat(parts) if len(parts) > 1 else parts[0])
    cfg = cfg.with_columns(pl.col("_s").str.slice(2).cast(pl.Int32).alias("_o"))
    return df, [_collect(cfg.sort("line_no", "_o", maintain_order=True).drop("_s", "_o"), 0)]


@functools.lru_cache(maxsize=256)
def _gated_stages(rules: tuple[int, ...], columns: tuple[str, ...]) -> list[list[pl.Expr]]:
    """with_columns lists, stage after stage, of the given rules, gated (expressions built once per rule set)."""
    stages, have = [], set(columns)
    for s in range(max((len(_RULES[False][i].stages) for i in rules), default=0)):
        chains: dict[str, pl.Expr] = {}
        for i in rules:
            rule = _RULES[False][i]
            for name, e in (rule.stages[s] if s < len(rule.stages) else ()):
                chains[name] = (chains[name].when(rule.rows()) if name in chains else pl.when(rule.rows())).then(e)
        if chains:
            stages.append([(ch.otherwise(pl.col(n)) if n in have else ch).alias(n) for n, ch in chains.items()])
            have |= set(chains)
    missing = [e for c, e in _ROW_FIELD_INPUTS.items() if c not in have]  # what _ROW_FIELDS reads
    return stages + [missing] if missing else stages


@functools.lru_cache(maxsize=256)
def _gated_cfg(rules: tuple[int, ...], kinds: frozenset, nks: frozenset) -> tuple[list, list]:
    """(key, gated value) column pairs of the specs of the given rules that can have rows: scalar values, list
    values; each key named _k<n>, its value _v<n>, n the spec's place in row order. The specs of net prefixes
    (one per row at most) share a pair by their position in their prefix's list."""
    specs: list[tuple[bool, list]] = []  # (many, [(cond, key, value)])
    for i in rules:
        rule = _RULES[False][i]
        by_pos: list[list] = []
        for k, spec in enumerate(rule.cfg):
            if ((spec.kinds is not None and not kinds.intersection(spec.kinds))
                    or (spec.nk is not None and spec.nk not in nks)):
                continue
            c = spec.cond()
            item = (rule.rows() if c is None else rule.rows() & c, spec.key, spec.value)
            if spec.nk is None:
                specs.append((spec.many, [item]))
                continue
            j = sum(1 for s in rule.cfg[:k] if s.nk == spec.nk)
            while len(by_pos) <= j:
                by_pos.append([])
            by_pos[j].append((spec.many, item))
        for pos in by_pos:  # one pair per position; list-valued if any spec there is
            many = any(m for m, _ in pos)
            specs.append((many, [(c, k, v if m or not many else pl.concat_list(v)) for m, (c, k, v) in pos]))
    scalar, many = [], []
    for n, (is_many, items) in enumerate(specs):
        (c0, k0, v0), rest = items[0], items[1:]
        # a null value drops the row (_cfg_rows): a spec of its own needs no gate on its key
        key, val = (pl.when(c0).then(k0) if rest else k0), pl.when(c0).then(v0)
        for c, k, v in rest:
            key, val = key.when(c).then(k), val.when(c).then(v)
        (many if is_many else scalar).append((key.alias(f"_k{n:03d}"), val.alias(f"_v{n:03d}")))
    return scalar, many

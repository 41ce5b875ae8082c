"""Run every detector over an open bundle and return one ranked `findings` frame."""
from __future__ import annotations

import hashlib
import json

import polars as pl

from forensics import schema
from forensics.detect.catalog import KINDS, severity_rank
from forensics.detect.rules import Rule, prepare, rules, used_params


def _params_for(rule: Rule, overrides: dict | None) -> dict:
    used = used_params(rule.sql)
    vals = {k: v for k, v in rule.params.items() if k in used}
    for k, v in (overrides or {}).items():
        if k in used:
            vals[k] = v
    missing = used - set(vals)
    if missing:
        raise ValueError(f"detector {rule.name}: parameters without default: {sorted(missing)}")
    return vals


def run_rule(bundle, rule: Rule, overrides: dict | None = None) -> pl.DataFrame:
    df = bundle.con.sql(rule.sql, params=_params_for(rule, overrides) or None).pl()
    return _to_findings(df, rule)


def _to_findings(df: pl.DataFrame, rule: Rule) -> pl.DataFrame:
    if df.height == 0:
        return schema.empty("findings")
    kind = KINDS[rule.kind]
    if "hosts" not in df.columns:
        df = df.with_columns(pl.concat_list(pl.col("host")).alias("hosts"))
    if "severity" not in df.columns:
        df = df.with_columns(pl.lit(rule.severity).alias("severity"))
    if "evidence" in df.columns and df.schema["evidence"] != pl.String:
        df = df.with_columns(pl.col("evidence").map_elements(lambda v: json.dumps(v, default=str), return_dtype=pl.String))
    out = df.select(
        pl.lit(rule.kind).alias("kind"),
        pl.col("severity").fill_null(rule.severity),
        pl.lit(kind.layer).alias("layer"),
        pl.col("start").cast(pl.Datetime("us", "UTC")),
        pl.col("end").cast(pl.Datetime("us", "UTC")),
        pl.col("hosts").cast(pl.List(pl.String)).list.unique(maintain_order=True).list.sort(),
        pl.col("subject").cast(pl.String),
        # (6 decimals: the engines sum a host's window averages in different orders, and the last bits
        # of a float must not make two engines' findings differ)
        pl.col("score").cast(pl.Float64).clip(0.0, 1.0).round(6),
        pl.col("summary").cast(pl.String),
        pl.col("evidence").cast(pl.String) if "evidence" in df.columns else pl.lit("{}").alias("evidence"),
        pl.lit(kind.confirm).alias("confirm"),
        (pl.col("remediation") if "remediation" in df.columns else pl.lit(kind.remediation)).cast(pl.String).alias("remediation"),
        pl.lit(None, dtype=pl.String).alias("caused_by"),
        pl.lit(rule.name).alias("detector"),
    )
    out = out.with_columns(pl.Series("confirm", [fill_confirm(c, e) for c, e in
                                                  zip(out["confirm"].to_list(), out["evidence"].to_list())], dtype=pl.String))
    ids = [
        f"{rule.kind}-" + hashlib.sha1(f"{rule.name}|{','.join(h)}|{s}|{st}".encode()).hexdigest()[:10]
        for h, s, st in zip(out["hosts"].to_list(), out["subject"].to_list(), out["start"].to_list())
    ]
    out = out.with_columns(pl.Series("id", ids, dtype=pl.String))
    return schema.conform(out, "findings")


_PLACEHOLDERS = {"<iface>": ("iface", "interface"), "<dev>": ("rdma_dev", "dev", "device"), "<pid>": ("pid",),
                 "<job>": ("job",), "<node>": ("node",)}


def fill_confirm(confirm: str | None, evidence: str | None) -> str | None:
    """The confirm command with its ``<iface>``/``<dev>``/``<pid>``/``<job>``/``<node>`` placeholders filled from the
    finding's evidence when it names exactly one (placeholders it does not name are left for the reader).

    >>> fill_confirm("ethtool -S <iface> | grep pause; mlnx_qos -i <iface>", '{"iface": "enp91s0np0"}')
    'ethtool -S enp91s0np0 | grep pause; mlnx_qos -i enp91s0np0'
    >>> fill_confirm("ethtool -S <iface>", '{"iface": ["eth0", "eth1"]}')
    'ethtool -S <iface>'
    """
    if not confirm or "<" not in confirm or not evidence:
        return confirm
    try:
        ev = json.loads(evidence)
    except ValueError:
        return confirm
    if not isinstance(ev, dict):
        return confirm
    for placeholder, keys in _PLACEHOLDERS.items():
        for k in keys:
            v = ev.get(k)
            if isinstance(v, list) and len(v) == 1:
                v = v[0]
            if isinstance(v, (str, int)) and not isinstance(v, bool) and str(v).strip() and " " not in str(v):
                confirm = confirm.replace(placeholder, str(v))
                break
    return confirm


def run_all(bundle, only: set[str] | None = None, overrides: dict | None = None,
            anomaly: bool = True, progress=None) -> tuple[pl.DataFrame, list[str]]:
    """All rule findings (+ anomaly findings), linked and ranked. Returns (findings, errors).
    A time window is applied to the bundle before (:func:`forensics.db.window.restrict`): the
    rules then read only its rows."""
    frames = []
    errors: list[str] = []
    prepare(bundle.con, getattr(bundle, "cached", ()))
    if anomaly and (not only or "anomaly" in only):
        _preload_model(bundle)
    selected = [r for r in rules() if not only or r.kind in only]
    for rule in selected:
        try:
            frames.append(run_rule(bundle, rule, overrides))
        except Exception as exc:  # one broken detector must not hide the others' findings
            if _interrupted(exc):  # ... but Ctrl-C stops the analysis, it does not skip one rule
                raise KeyboardInterrupt from None
            errors.append(f"detector {rule.name}: {str(exc).splitlines()[0]}")
        if progress:
            progress(rule.name)
    findings = pl.concat(frames) if frames else schema.empty("findings")
    return finish(bundle, findings, errors, only, anomaly)


def finish(bundle, findings: pl.DataFrame, errors: list[str], only: set[str] | None = None,
           anomaly: bool = True) -> tuple[pl.DataFrame, list[str]]:
    """The rules' `findings` of the open `bundle` (all hosts) completed: the anomaly model's added
    (a failure of it is one line in `errors`), duplicates by id dropped, causes linked and ranked.
    Shared by :func:`run_all` and the engines' reduce step (:mod:`forensics.engine.reduce`)."""
    if anomaly and (not only or "anomaly" in only):
        from forensics.detect.anomaly import detect_anomalies

        try:
            findings = pl.concat([findings, detect_anomalies(bundle, findings)])
        except Exception as exc:
            if _interrupted(exc):
                raise KeyboardInterrupt from None
            errors.append(f"anomaly model: {str(exc).splitlines()[0]}")
    findings = findings.unique(subset=["id"], keep="first", maintain_order=True)
    from forensics.detect.causality import gid_hosts, link_and_rank, nccl_peers

    return link_and_rank(findings, nccl_peers(bundle), gid_hosts(bundle)), errors


def _interrupted(exc: BaseException) -> bool:
    """Whether `exc` is DuckDB's report of a query stopped by SIGINT (an InterruptException, or the
    RuntimeError('Query interrupted') some of its calls raise instead)."""
    import duckdb

    return isinstance(exc, duckdb.InterruptException) or (isinstance(exc, RuntimeError) and "interrupted" in str(exc).lower())


def _preload_model(bundle) -> None:
    """Import scikit-learn (about 1 CPU s) on a thread while the rules' SQL runs (DuckDB releases the
    GIL), when the anomaly model will fit its forest on this bundle (its inputs are the setup scripts'
    window tables, made by then)."""
    import sys
    import threading

    from forensics.detect.anomaly import needs_forest

    try:
        needed = "sklearn.ensemble" not in sys.modules and needs_forest(bundle)
    except Exception:  # noqa: BLE001 (the model's own run reports what fails; this only saves time)
        needed = False
    if needed:
        threading.Thread(target=__import__, args=("sklearn.ensemble",), daemon=True).start()


def max_severity(findings: pl.DataFrame) -> str | None:
    if findings.height == 0:
        return None
    return max(findings["severity"].to_list(), key=severity_rank)

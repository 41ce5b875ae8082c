"""Per-kind message fields and nccl_config rows, declared once as rules that read the message and kind only."""
from __future__ import annotations

import functools
import operator
import re
from typing import NamedTuple

import polars as pl
from forensics.sources.nccl.patterns import _PEER, _i
from forensics.sources.nccl.classify import _K, _M


# --- per-kind fields and configuration, declared once -----------------------------------------------
# A rule names the kinds it applies to, the columns it computes from the message, stage after stage (names
# starting with "_" are scratch; a value used twice is computed once into a scratch column of an earlier stage:
# eager polars calls do not share common subexpressions), the columns it hands on, and the nccl_config rows it
# yields. Rules read the message and kind only (checked below); _ROW_FIELDS combines what they found with the
# row's own columns. Big inputs evaluate each rule once per distinct message of its kinds (_by_message); small
# inputs evaluate the rules of the kinds present at once on the whole frame, every expression gated by its
# rule's rows (_rules_gated): a few polars calls per file instead of hundreds. No two rules write a column of
# one row.
class _Spec(NamedTuple):
    """nccl_config rows (one per list element when `many`): key and value, on the rule's rows that match
    `where`, are of one of `kinds` (all of the rule's when None) and whose "_nk" (the literal prefix of a net
    line) is `nk` (any when None)."""
    key: pl.Expr
    value: pl.Expr
    where: pl.Expr | None = None
    many: bool = False
    kinds: tuple[str, ...] | None = None
    nk: str | None = None

    def cond(self) -> pl.Expr | None:
        parts = [c for c in (self.where, None if self.kinds is None else _K.is_in(self.kinds),
                             None if self.nk is None else pl.col("_nk") == self.nk) if c is not None]
        return functools.reduce(operator.and_, parts) if parts else None


class _Rule(NamedTuple):
    kinds: tuple[str, ...]
    stages: tuple[tuple[tuple[str, pl.Expr], ...], ...] = ()
    out: tuple[str, ...] = ()
    cfg: tuple[_Spec, ...] = ()
    warn_only: bool = False  # only what WARN rows use (_ROW_FIELDS): skip the messages no WARN row has

    def rows(self, kinds: list[str] | None = None) -> pl.Expr:
        kinds = list(self.kinds if kinds is None else kinds)
        cond = _K.is_in(kinds) if len(kinds) > 1 else _K == kinds[0]
        return cond & (pl.col("level") == "WARN") if self.warn_only else cond


def _c(key: str | pl.Expr, value: pl.Expr, where: pl.Expr | None = None, **kw) -> _Spec:
    return _Spec(pl.lit(key) if isinstance(key, str) else key, value, where, **kw)


_CFG_COLS = ("line_no", "host", "pid", "rank", "cuda_dev")
_NET_PLUGIN = (pl.when(_M.str.contains("No plugin found|Using internal network plugin|Plugin load returned"))
               .then(pl.lit("internal"))
               .otherwise(pl.coalesce(_M.str.extract(r"Loaded net plugin (.+)$", 1),
                                      _M.str.extract(r"^Assigned NET plugin (.+) to comm", 1))))
_SOCKET_IF = _M.str.extract_all(r"\[[0-9]+\][^\s\[\]]+").list.eval(pl.element().str.replace(r"^\[[0-9]+\]", ""))
_IB_USING = [("ib_hca", _M.str.extract_all(r"[A-Za-z0-9_.-]+:[0-9]+/(?:IB|RoCE)"), True),
             ("oob_if", _M.str.extract(r"OOB ([^\s]+)", 1), False)]
_NET_CFG = {  # literal message prefix -> nccl_config (key, value, many)
    "NET/IB : Using": _IB_USING, "NET/IB: Using": _IB_USING,
    "NET/IB : No device found": [("ib_hca", pl.lit("none"), False)],
    "NET/IB: No device found": [("ib_hca", pl.lit("none"), False)],
    "NET/Socket : Using": [("socket_if", _SOCKET_IF, True)], "NET/Socket: Using [": [("socket_if", _SOCKET_IF, True)],
    "Bootstrap": [("bootstrap_if", _M.str.extract(r"Using (?:\[[0-9]+\])?([^\s]+)", 1), False)],
    "Using network ": [("net", _M.str.slice(14), False)],
    "NET/Plugin": [("net_plugin", _NET_PLUGIN, False)], "Assigned NET plugin": [("net_plugin", _NET_PLUGIN, False)],
    "Plugin Path : ": [("net_plugin_path", _M.str.slice(14), False)],
    "P2P plugin ": [("p2p_plugin", _M.str.slice(11), False)],
}
_NET_CFG_RE = "^(" + "|".join(re.escape(k) for k in sorted(_NET_CFG, key=len, reverse=True)) + ")"


def _make_rules(ascii_only: bool) -> tuple[_Rule, ...]:
    """The rules; with ascii_only (every message ASCII), channel transports are sliced at a byte offset."""
    via = pl.col("_via").is_not_null()
    # byte offset -> character slice is exact for ASCII messages; others take the split (same value)
    transport = _M.str.slice(pl.col("_via") + 5) if ascii_only else _M.str.splitn(" via ", 2).struct.field("field_1")
    chain, init, env = pl.col("_chain").struct.field, pl.col("_init").struct.field, pl.col("_env").struct.field
    gdr_state = _M.str.extract(r"GPU Direct RDMA (?:\([^)]*\) )?([Ee]nabled|[Dd]isabled)", 1).str.to_lowercase()
    gdr_hca = pl.coalesce(_M.str.extract(r"HCA [0-9a-fx]+ '([^'\s]+)", 1), _M.str.extract(r"HCA ([0-9a-fx]+)", 1))
    init_kinds = ("init_complete", "init_start", "comm_info")
    return (
        _Rule(("version",), cfg=(_c("version", _M.str.extract(r"NCCL version ([^\s]+)", 1)),)),
        _Rule(("ib_completion_error",), stages=((
            ("peer_addr", _M.str.extract(r"from peer ([^\s]*<[0-9]+>) with", 1)),
            # 'with error 12,' (to 2.18), 'with status=12 ' (2.19-2.28), 'with status=IBV_WC_RETRY_EXC_ERR(12) ' (2.29+)
            ("ib_status", _i(_M.str.extract(r"with (?:error |status=(?:IBV_WC_[A-Z_]{1,40}\()?)([0-9]{1,9})\b", 1),
                             "ib_status")),
            ("vendor_err", _i(_M.str.extract(r"vendor[ _]err[ =]([0-9]{1,9})\b", 1), "vendor_err"))),),
            out=("peer_addr", "ib_status", "vendor_err")),
        _Rule(("error_chain",), stages=(
            (("_chain", _M.str.extract_groups(r"^(?P<f>[^ ]+):(?P<l>[0-9]{1,9}) -> (?P<r>-?[0-9]{1,9})\b")),),
            (("_chain_file", chain("f")), ("_chain_line", _i(chain("l"), "src_line")),
             ("retcode", _i(chain("r"), "retcode")))),
            out=("_chain_file", "_chain_line", "retcode")),
        _Rule(("socket_error", "remote_closed", "connect_error"), stages=((
            ("peer_addr", _M.str.extract(_PEER, 1)),
            ("retcode", _i(_M.str.extract(r"retcode (-?[0-9]{1,9})\b", 1), "retcode"))),),
            out=("peer_addr", "retcode")),
        _Rule(("init_complete", "init_start", "init_timings", "comm_info"), stages=(
            (("_init", _M.str.extract_groups(
                r"(?:comm (?P<c>0x[0-9a-f]+) )?rank (?P<r>[0-9]{1,9}) n[Rr]anks (?P<n>[0-9]{1,9})")),),
            (("comm_id", pl.coalesce(_M.str.extract(r"commId (0x[0-9a-f]+)", 1), init("c"))),
             ("nranks", _i(init("n"), "nranks")), ("_msg_rank", _i(init("r"), "msg_rank")))),
            out=("comm_id", "nranks", "_msg_rank"),
            cfg=(_c("nranks", pl.col("nranks").cast(pl.String), kinds=init_kinds),
                 _c("comm_id", pl.col("comm_id"), kinds=init_kinds),
                 _c("nnodes", _M.str.extract(r" nNodes ([0-9]+)", 1), kinds=("comm_info",)),
                 _c("local_ranks", _M.str.extract(r" localRanks ([0-9]+)", 1), kinds=("comm_info",)),
                 _c("mnnvl", _M.str.extract(r" MNNVL ([0-9]+)", 1), kinds=("comm_info",)))),
        _Rule(("env",), stages=((("_env", _M.str.splitn(" set by environment to ", 2)),),),
              cfg=(_c(pl.lit("env.") + env("field_0").str.extract(r"([A-Za-z_][A-Za-z0-9_]*)$", 1),
                      env("field_1").str.strip_chars_end().str.replace(r"([^.])\.$", "$1")),)),
        _Rule(("gdr",), cfg=(_c(pl.lit("gdr.") + gdr_hca, gdr_state, _M.str.contains("GPU Direct RDMA", literal=True)),
                             _c("dmabuf", pl.lit("available"), _M.str.starts_with("DMA-BUF is available")))),
        _Rule(("channel", "ring"), stages=((("_via", _M.str.find(" via ", literal=True)),),), cfg=(
            _c("channel_transport", transport, via),
            _c("nchannels", _M.str.extract(r"^Channel 00/0*([0-9]+) :", 1), ~via & _M.str.starts_with("Channel 00/")),
            _c("nchannels", _M.str.extract(r"^([0-9]+) coll channels", 1), ~_M.str.starts_with("C")),
            _c("gdr", _M.str.extract(r"use ring PXN [0-9]+ GDR ([0-9]+)", 1),
               _M.str.starts_with("Connected all rings,")))),
        # the few net lines that carry configuration, keyed by their literal prefix (one anchored pass)
        _Rule(("net",), stages=((("_nk", _M.str.extract(_NET_CFG_RE, 1)),),),
              cfg=tuple(_c(key, value, many=many, nk=nk)
                        for nk, specs in _NET_CFG.items() for key, value, many in specs)),
        _Rule(("other",), cfg=(
            _c("cuda_driver", _M.str.slice(18), _M.str.starts_with("cudaDriverVersion ")),
            _c("cpu_affinity", _M.str.splitn(" to ", 2).struct.field("field_1"),
               _M.str.starts_with("Setting affinity for GPU ")))),
        # an unclassified WARN may still name its peer (kept for WARN rows by _ROW_FIELDS)
        _Rule(("other", "abort"), stages=((("_warn_peer", _M.str.extract(_PEER, 1)),),), out=("_warn_peer",),
              warn_only=True),
    )


# What a rule found in the message, combined with the row's own columns (the rules read messages only, so big
# inputs evaluate them once per distinct message): the file:line of an error chain unless the header had one, the
# rank an init line names unless a launcher prefix gave one, the peer of an unclassified WARN.
_ROW_FIELDS = [pl.coalesce(pl.col("src_file"), pl.col("_chain_file")).alias("src_file"),
               pl.coalesce(pl.col("src_line"), pl.col("_chain_line")).alias("src_line"),
               pl.coalesce(pl.col("rank"), pl.col("_msg_rank")).alias("rank"),
               pl.coalesce(pl.col("peer_addr"), pl.when(pl.col("level") == "WARN").then(pl.col("_warn_peer")))
               .alias("peer_addr")]
_ROW_FIELD_INPUTS = {c: pl.lit(None, dtype=t).alias(c) for c, t in (  # typed nulls where no rule wrote them
    ("_chain_file", pl.String), ("_chain_line", pl.Int32), ("_msg_rank", pl.Int32), ("peer_addr", pl.String),
    ("_warn_peer", pl.String))}


_RULES = {True: _make_rules(True), False: _make_rules(False)}


def _inputs(rule: _Rule) -> list[str]:
    """Columns a rule reads (not those it computed itself before reading them)."""
    roots = (lambda exprs: {n for e in exprs if e is not None for n in e.meta.root_names()})
    need, made = set(), set()
    for stage in rule.stages:
        need |= roots([e for _, e in stage]) - made
        made |= {name for name, _ in stage}
    return sorted(need | (roots([e for spec in rule.cfg for e in (spec.key, spec.value, spec.cond())]) - made))


_RULE_INPUTS = {flag: [_inputs(r) for r in rules] for flag, rules in _RULES.items()}
assert all(set(i) <= {"message", "kind"} for ins in _RULE_INPUTS.values() for i in ins), "rules read messages only"

"""Fields of a kernel message: subsystem, pci_addr, iface, xid, xid_text and the signature fields of
events.py (a function of the message text alone, so repeated messages are worked on once)."""
from __future__ import annotations

import polars as pl

from forensics.sources.dmesg.events import add_events
from forensics.sources.dmesg.prefixes import _masked, _match

# interface names as drivers print them (a digit or dash after the stem keeps module names out)
_IF = r"(?:eth|en[a-zA-Z]|ib|bond|wl|cali|veth|docker|br|virbr|swp|team|vxlan|vlan|tap|tun|lan|wan|em|" \
      r"p[0-9]|macvtap|ovs|flannel|cni|tailscale|wg|rmnet|hsn)[A-Za-z_.@]*[0-9-][A-Za-z0-9_.@-]*"
# dev_printk / netdev_printk: "driver busid[ ifname]: " (no spaces inside the three parts)
RE_DEV = r"^[A-Za-z][A-Za-z0-9_.-]* [^ ]*[0-9][^ ]*?(?: [A-Za-z][A-Za-z0-9_.@-]*)?: "
# "Word: " / "systemd[1]: " / "x86/fpu: "
RE_WORD = r"^[A-Za-z_][A-Za-z0-9_./-]*(?:\[[0-9]+\])?: "
# "nvidia-peermem nv_get_p2p_free_callback:127 ERROR ..."
RE_MODFN = r"^[a-z][a-z0-9_-]* [A-Za-z0-9_]+:[0-9]+[: ]"
# "[PF_RING] Module unloaded"
RE_BRACKET = r"^\[[A-Za-z][A-Za-z0-9_ -]*\] "
# where an interface name stands: after "driver busid: ", "word: " (and "ADDRCONF(...): "), or first
RE_IFACE = (r"^(?:[A-Za-z][A-Za-z0-9_.-]* [^ ]*[0-9][^ ]*?: |[A-Za-z][A-Za-z0-9_./-]*: "
            r"(?:ADDRCONF\([A-Z_]+\): )?)?" + _IF + r"[: ]")
RE_PCI_ANY = (r"(?:^|[^0-9A-Za-z:.]|PCI:)(?:[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
              r"|[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?:[^0-9A-Za-z]|$)")
RE_PCI_CORE = r"(?:[0-9a-f]{4}:)?[0-9a-f]{2}:[0-9a-f]{2}(?:\.[0-7])?"
RE_PCI_FULL = r"^[0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$"
RE_XID_AT = r"^NVRM: Xid \((?:PCI:)?[0-9a-fA-F:.]+\): [0-9]{1,10}\b"  # (a longer number is no Xid; over 2^31-1: null, never cut)


DEDUP_MIN_ROWS = 4096  # from this many rows, a log whose messages repeat gets its fields once per distinct message
DEDUP_SAMPLE = 16384


def _fields(df: pl.DataFrame) -> pl.DataFrame:
    """subsystem, pci_addr, iface, xid, xid_text from `message` (a function of the message alone).

    Big logs are mostly floods of the same messages (link flaps, DMAR faults, repeated Xids): when
    at most half of the first DEDUP_SAMPLE messages are distinct, the fields are extracted once per
    distinct message and joined back (the same values, a fraction of the regex work)."""
    if df.height >= DEDUP_MIN_ROWS:
        sample = df["message"].head(DEDUP_SAMPLE)
        if sample.n_unique() * 2 <= sample.len():
            # distinct messages by their 64-bit hash (an integer join), checked against the text
            h = df.select(pl.col("message").hash().alias("_h"), pl.col("message"))
            fields = _message_fields(h.unique(subset="_h", keep="any"))
            # columns null for every distinct message (the event fields of a log without events, Xid fields
            # without Xids): added as typed nulls rather than carried through the join (a 420 k-row log with
            # 186 distinct messages: 43 -> 36 ms)
            types = {c: t for c, t in fields.schema.items() if c not in ("_h", "message")}
            empty = [c for c in types if fields[c].null_count() == fields.height]
            fields = fields.drop(empty)
            out = h.select("_h").join(fields.rename({"message": "_m"}), on="_h", how="left", maintain_order="left")
            if out["_m"].equals(df["message"], null_equal=True):
                out = pl.concat([df, out.drop("_h", "_m")], how="horizontal")
                return out.with_columns(pl.lit(None, dtype=types[c]).alias(c) for c in empty)
            return df.join(_message_fields(df.select("message").unique()), on="message", how="left",
                           maintain_order="left")
    return _message_fields(df)


def _message_fields(df: pl.DataFrame) -> pl.DataFrame:
    """subsystem, pci_addr, iface, xid, xid_text from `message` (one lazy query, built once)."""
    lf = df.lazy()
    for step in _FIELD_STEPS:
        lf = lf.with_columns(step)
    return add_events(lf.drop(_FIELD_TEMPS).collect())


def _field_steps() -> list[list[pl.Expr]]:
    """The with_columns steps of _message_fields.

    The shapes are found with capture-free matches and split with plain string operations."""
    m = pl.col("message")
    d = pl.col("_dev")
    steps = [
        [_match(m, RE_DEV).str.strip_suffix(": ").str.split(" ").alias("_dev")],
        [d.list.get(0, null_on_oob=True).alias("drv"), d.list.get(1, null_on_oob=True).alias("bus"),
         d.list.get(2, null_on_oob=True).alias("dif")],
        [_match(pl.when(pl.col("drv").is_null()).then(m), RE_WORD).str.strip_suffix(": ").alias("word")],
    ]
    w = pl.col("word")
    steps.append([pl.when(w.str.ends_with("]")).then(w.str.replace(r"\[[0-9]+\]$", "")).otherwise(w).alias("word")])
    steps.append([pl.when(pl.col("word").is_null() & pl.col("drv").is_null()).then(m).alias("_nw")])
    noword = pl.col("_nw")
    steps.append([
        _match(_masked(noword, RE_MODFN), r"^[^ ]+").alias("mod"),
        _match(pl.when(noword.str.starts_with("[")).then(noword), RE_BRACKET).str.slice(1).str.strip_suffix("] ")
        .alias("brk"),
        # interface: "driver busid ifname:" already split; otherwise where RE_IFACE puts it
        # (the match ends with the ":" or " " after the name, which has neither; before it a space or nothing)
        _match(pl.when(pl.col("dif").is_null()).then(m), RE_IFACE).str.head(-1).str.split(" ").list.last()
        .alias("_if"),
    ])
    bus_pci = pl.col("bus").str.contains(RE_PCI_FULL).fill_null(False)
    other = _masked(pl.when(~bus_pci).then(m), r"[0-9a-fA-F]{2}:[0-9a-fA-F]{2}")
    steps.append([pl.when(bus_pci).then(pl.col("bus").str.to_lowercase())
                  .otherwise(_match(_match(other, RE_PCI_ANY).str.to_lowercase(), RE_PCI_CORE)).alias("_pci")])
    n = pl.col("_pci").str.len_chars()
    steps.append([pl.when(n == 7).then(pl.concat_str([pl.lit("0000:"), pl.col("_pci")]))
                  .when(n == 10).then(pl.concat_str([pl.col("_pci"), pl.lit(".0")]))
                  .otherwise(pl.col("_pci")).alias("pci_addr")])
    word_is_if = pl.col("word").str.contains("^" + _IF + "$").fill_null(False)
    steps.append([
        pl.coalesce(pl.col("drv"), pl.when(~word_is_if).then(pl.col("word")), pl.col("mod"), pl.col("brk"))
        .alias("subsystem"),
        pl.coalesce(pl.col("dif"), pl.col("_if")).alias("iface"),
    ])
    # "NVRM: Xid (PCI:0000:18:00): 79, pid=..., GPU has fallen off the bus." (all null without one)
    has = m.str.contains("NVRM: Xid (", literal=True).fill_null(False)
    # the text from "NVRM: Xid (" on (usually the whole message)
    steps.append([pl.when(has).then(
        pl.concat_str([pl.lit("NVRM: Xid ("), m.str.splitn("NVRM: Xid (", 2).struct.field("field_1")]))
        .alias("_xafter")])
    steps.append([_match(pl.col("_xafter"), RE_XID_AT).alias("_xhead")])
    head = pl.col("_xhead")
    steps.append([
        head.str.extract(r"[0-9]+$", 0).cast(pl.Int32, strict=False).alias("xid"),
        pl.when(head.is_not_null()).then(
            pl.col("_xafter").str.slice(head.str.len_chars()).str.strip_prefix(",").str.strip_prefix(" "))
        .cast(pl.String).alias("xid_text"),
    ])
    return steps


_FIELD_STEPS = _field_steps()
_FIELD_TEMPS = ["_dev", "drv", "bus", "dif", "word", "_nw", "mod", "brk", "_if", "_pci", "_xafter", "_xhead"]

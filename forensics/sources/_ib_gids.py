"""RDMA GID tables (``ib_gids``) as four tools print them; a helper of :mod:`forensics.sources.infiniband`.

A port's GID table holds its addresses: for RoCE one link-local ``fe80::`` GID from the MAC and one
IPv4-mapped (``::ffff:a.b.c.d``) or IPv6 GID per IP address of the netdev, each once as RoCE v1
and once as RoCE v2; for InfiniBand the subnet prefix + port GUID. NCCL names the peer of a failed
RDMA completion by its GID (``remoteGids::ffff:10.0.106.6``), so the tables tie an error to the host
that owns the address. Read from (samples: tests/fixtures/infiniband, tests/fixtures/README.md):

* sysfs read with ``grep -H`` (what ``forensics collect`` runs): ``<port>/gids/<n>:<gid>`` (8 groups
  of 4 hex digits; an unused entry reads all zero), ``<port>/gid_attrs/types/<n>:RoCE v2`` (or
  ``IB/RoCE v1``; an unused entry gives EINVAL, which ``grep -s`` drops) and
  ``<port>/gid_attrs/ndevs/<n>:<netdev>`` (kernel ``drivers/infiniband/core/sysfs.c``; NVIDIA MLNX_OFED
  "RDMA over Converged Ethernet", "GID Table in sysfs");
* ``show_gids`` (mlnx-tools): a ``DEV PORT INDEX GID IPv4 VER DEV`` header, a ``---`` rule, one
  TAB-separated row per non-zero GID (IPv4 column only for IPv4-mapped GIDs) and ``n_gids_found=N``;
* ``ibv_devinfo -v`` (rdma-core): ``hca_id:`` and ``port:`` lines, then ``GID[  3]:  <gid>`` with,
  since rdma-core v29, ``, RoCE v2`` and IPv6 notation for RoCE v2 GIDs;
* ``ibstatus``: ``default gid:`` (index 0).

``address`` is the GID as ``inet_ntop(AF_INET6)`` prints it (what NCCL prints): compressed, IPv4-mapped
ones as ``::ffff:a.b.c.d``. All-zero GIDs and the bare ``fe80::`` prefix (unused entries) give no row,
as show_gids skips them.
"""
from __future__ import annotations

import functools
import re

import polars as pl

from forensics.gid import address
from forensics.sources._bounded import INT32, int_or_none

_TS = pl.Datetime("us", "UTC")
_HEX8 = r"[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4}){7}"

SYSFS_GID = re.compile(r"^\s*(?:\S*?/)?(?:infiniband/)?([A-Za-z0-9_.:-]+)/ports/([0-9]+)/+"
                       r"(gids|gid_attrs/types|gid_attrs/ndevs)/+([0-9]+):(.*?)\s*$")
SHOW_GIDS_ROW = re.compile(rf"^\s*([A-Za-z][A-Za-z0-9_.:-]*)\s+([0-9]+)\s+([0-9]+)\s+({_HEX8})"
                           r"(?:\s+([0-9]{1,3}(?:\.[0-9]{1,3}){3}))?(?:\s+(v[12]))?(?:\s+(\S+))?\s*$")
SHOW_GIDS_STRUCTURE = re.compile(r"^\s*(?:DEV\s+PORT\s+INDEX\s+GID\b.*|-{3}\s+-{4}\s+-{3,5}\s+-{3}.*|n_gids_found=[0-9]+)\s*$")
DEVINFO_HCA = re.compile(r"^hca_id:\s*(\S+)\s*$")
DEVINFO_PORT = re.compile(r"^\s+port:\s*([0-9]+)\s*$")
DEVINFO_ATTR = re.compile(r"^\s+[a-z][a-z0-9_]*:\s*\S")  # ibv_devinfo's other `name: value` lines
DEVINFO_GID = re.compile(r"^\s+GID\[\s*([0-9]+)\]:\s*([0-9A-Fa-f:.]+)(?:,\s*(.*?))?\s*$")
REMOTE_GIDS = re.compile(r"remoteGids\s*([0-9A-Fa-f:.]*[0-9A-Fa-f])")

# a port number is 8 bits (IBA PortNum; the kernel's u8/u32 port_num never exceeds the HCA's phys_port_cnt,
# at most 255); a GID index is the kernel's int index into the port's GID table (gid_tbl_len)
PORT_MAX = 255
NOT_PORT = "port number over 255 is not an InfiniBand port (IBA PortNum is 8 bits)"
NOT_INDEX = "GID index beyond 32 bits is not a GID table index"


def port_no(text: str) -> int | None:
    """The port number of the digits `text`; None where it is over :data:`PORT_MAX` (no port)."""
    return _port_no(text) if len(text) <= _MEMO_DIGITS else int_or_none(text, 0, PORT_MAX)


def index_no(text: str) -> int | None:
    """The GID table index of the digits `text`; None where it does not fit 31 bits."""
    return _index_no(text) if len(text) <= _MEMO_DIGITS else int_or_none(text, 0, INT32[1])


# a GID table repeats its port and its 255 indexes every sample (10 k lines a host-hour): each text read once
# (a gids file of 1,848 lines 11-14 -> 8-9 CPU ms, benchmarks/results/parse-speed-2026-12-07-issue21-b.md); short
# texts only, so the memo holds at most 1,024 x 12 characters
_MEMO_DIGITS = 12


@functools.lru_cache(maxsize=1024)
def _port_no(text: str) -> int | None:
    return int_or_none(text, 0, PORT_MAX)


@functools.lru_cache(maxsize=1024)
def _index_no(text: str) -> int | None:
    return int_or_none(text, 0, INT32[1])


@functools.lru_cache(maxsize=1024)
def _address_of_short(gid: str) -> str | None:
    return address(gid)


def table_address(gid: str) -> str | None:
    """:func:`forensics.gid.address` of a GID table entry, each distinct short one computed once (a sysfs
    series repeats its table every sample; ``ipaddress`` was half of reading it). Bounded: at most 1,024
    texts of at most 64 characters are kept; longer ones are computed each time."""
    return _address_of_short(gid) if len(gid) <= 64 else address(gid)


def remote_addresses(message: str | None) -> list[str]:
    """The remote GIDs an NCCL completion error names (``remoteGids::ffff:10.0.106.6``), as
    :func:`address` gives them."""
    return [a for a in (address(m) for m in REMOTE_GIDS.findall(message or "")) if a]


class Gids:
    """``ib_gids`` rows built up line by line; sysfs type/netdev lines complete the entry of their index."""

    COLS = {"line_no": pl.Int64, "sample_no": pl.Int64, "ts": _TS, "ts_quality": pl.String, "device": pl.String,
            "port": pl.Int32, "gid_index": pl.Int32, "gid": pl.String, "address": pl.String, "gid_type": pl.String,
            "ndev": pl.String, "tool": pl.String}

    def __init__(self) -> None:
        self.rows: list[dict] = []
        self._sysfs: dict[tuple, dict] = {}
        self._attrs: dict[tuple, dict] = {}

    def add(self, **row) -> dict:
        self.rows.append(row)
        return row

    def sysfs(self, m: re.Match, line_no: int, stamp: dict) -> str | None:
        """One ``grep -H`` line of ``gids/<n>``, ``gid_attrs/types/<n>`` or ``gid_attrs/ndevs/<n>``; the
        reason it is not read where its port or index is none (:func:`port_no`, :func:`index_no`)."""
        port, index = port_no(m.group(2)), index_no(m.group(4))
        if port is None or index is None:
            return NOT_PORT if port is None else NOT_INDEX
        key = (stamp["sample_no"], m.group(1), port, index)
        what, value = m.group(3), m.group(5)
        if what == "gids":
            addr = table_address(value)
            if addr is None:
                return None  # an unused entry: structure of the table, no address
            row = self.add(line_no=line_no, tool="sysfs", device=m.group(1), port=port,
                           gid_index=index, gid=value, address=addr, **stamp, **self._attrs.pop(key, {}))
            self._sysfs[key] = row
            return None
        field = "gid_type" if what.endswith("types") else "ndev"
        row = self._sysfs.get(key)
        if row is not None:
            row[field] = value or None
        else:  # grep -r may list gid_attrs before gids
            self._attrs.setdefault(key, {})[field] = value or None
        return None

    def frame(self) -> pl.DataFrame:
        return pl.DataFrame([{k: r.get(k) for k in self.COLS} for r in self.rows], schema=self.COLS, orient="row")


def show_gids_row(m: re.Match, line_no: int, stamp: dict) -> dict | str | None:
    """The ``ib_gids`` row of a show_gids line; None for an entry without an address; the reason it is
    not read where its port or index is none (:func:`port_no`, :func:`index_no`)."""
    port, index = port_no(m.group(2)), index_no(m.group(3))
    if port is None or index is None:
        return NOT_PORT if port is None else NOT_INDEX
    addr = address(m.group(4))
    if addr is None:
        return None
    return {"line_no": line_no, "tool": "show_gids", "device": m.group(1), "port": port,
            "gid_index": index, "gid": m.group(4), "address": addr, "gid_type": m.group(6),
            "ndev": m.group(7), **stamp}

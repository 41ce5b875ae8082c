"""``mlnx_qos -i <iface>`` of the simulated ConnectX ports, as MLNX_OFED prints it
(tests/fixtures/mlnx_qos: OS-controlled DCBX, the dscp2prio table, ``Cable len: 7``, the PFC table,
one ``tc: N`` block per traffic class with priority 0 on tc 1 and 1 on tc 0, tsa vendor). Rails:
trust dscp, PFC on priority 3 (the RoCE class of the ethtool model); the frontend port: trust pcp
(no dscp2prio table then), no PFC (it uses global pause). A scenario may set a host's rails to
``plan.qos_override[h] = {"trust": ..., "pfc": [...]}``.
"""
from __future__ import annotations

import datetime as dt

from forensics.layout import format_marker


def _dscp_rows() -> list[str]:
    return [f"        prio:{p} dscp:" + ",".join(f"{d:02d}" for d in range(8 * p + 7, 8 * p - 1, -1)) + ","
            for p in range(8)]


def qos(nic, plan, h: int, ts_host: float, argv: str) -> bytes:
    rail = nic.rail is not None
    trust, pfc = ("dscp", [3]) if rail else ("pcp", [])
    if rail and h in plan.qos_override:
        trust = plan.qos_override[h].get("trust", trust)
        pfc = plan.qos_override[h].get("pfc", pfc)
    lines = ["DCBX mode: OS controlled", f"Priority trust state: {trust}"]
    if trust == "dscp":
        lines += ["dscp2prio mapping:"] + _dscp_rows()
    flags = "".join(f"{1 if p in pfc else 0:<4d}" for p in range(8))
    lines += ["Cable len: 7", "PFC configuration:", "        priority    0   1   2   3   4   5   6   7",
              f"        enabled     {flags}"]
    for tc in range(8):
        prio = {0: 1, 1: 0}.get(tc, tc)
        lines += [f"tc: {tc} ratelimit: unlimited, tsa: vendor", f"         priority:  {prio}"]
    ts = dt.datetime.fromtimestamp(round(float(ts_host), 6), dt.timezone.utc)
    return (format_marker(ts, argv) + "\n" + "\n".join(lines) + "\n").encode()

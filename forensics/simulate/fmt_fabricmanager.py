"""Fabric Manager on a simulated node (HGX H100, 4 NVSwitches): its log file
``/var/log/fabricmanager.log`` and the ``nvidia-fabricmanager`` unit's journal of this boot.

The service starts about 40 s into the boot; FM connects to its node and configures the NVSwitches,
then logs nothing until a fault: the wording is that of the real logs and journals in
tests/fixtures/fabricmanager (``Connected to 1 node.``, ``Successfully configured all the available
NVSwitches to route GPU NVLink traffic. ...``; systemd's ``Starting``/``Started`` lines and the start
script's ``Started "Nvidia Fabric Manager"``). The log prints the host's local time
(``[Mon DD YYYY hh:mm:ss] [LEVEL] [tid N]``), the journal ``-o short-iso``.
"""
from __future__ import annotations

from forensics.simulate import textfmt as tf
from forensics.simulate.config import rng

READY = ("Successfully configured all the available NVSwitches to route GPU NVLink traffic. NVLink Peer-to-Peer "
         "support will be enabled once the GPUs are successfully registered with the NVLink fabric.")


def _start(host, seed: int) -> tuple[float, int, int, int]:
    """(true time FM starts, its pid, the start script's pid, FM's main thread id) of this boot."""
    r = rng(seed, "fabricmanager", host.index)
    t = host.boot_true + float(r.uniform(35.0, 50.0))
    pid = int(r.integers(1800, 2600))
    return t, pid, pid - int(r.integers(40, 90)), pid + int(r.integers(1, 9))


def log(host, seed: int, events=(), copied: float = float("inf")) -> bytes:
    """/var/log/fabricmanager.log of this boot as the collector copies it (at true time `copied`):
    the start, then `events` ``(true time, level, message)`` a scenario has FM log (the fault
    monitor's lines, e.g. ``detected NVSwitch fatal error ...``), in time order; an event may name its
    thread as a fourth element (FM logs from several threads), else FM's main thread's."""
    t, _, _, tid = _start(host, seed)
    rows = [(t + 1.2, "INFO", "Connected to 1 node."), (t + 2.6, "INFO", READY)]
    rows += sorted(e for e in events if e[0] <= copied)
    stamps = tf.times([host.offset_s + row[0] for row in rows], host.tz, "%b %d %Y %H:%M:%S").to_list()
    return tf.lines_bytes([f"[{s}] [{lvl}] [tid {(rest or [tid])[0]}] {m}" for s, (_, lvl, m, *rest) in zip(stamps, rows)])


def journal(host, seed: int) -> bytes:
    """``journalctl -u nvidia-fabricmanager -b -o short-iso`` of this boot."""
    t, pid, spid, _ = _start(host, seed)
    lines = [
        (t - 0.4, "systemd[1]", "Starting nvidia-fabricmanager.service - NVIDIA fabric manager service..."),
        (t - 0.3, f"nvidia-fabricmanager-start.sh[{spid}]", "Detected Pre-NVL5 system"),
        (t + 1.2, f"nv-fabricmanager[{pid}]", "Connected to 1 node."),
        (t + 2.6, f"nv-fabricmanager[{pid}]", READY),
        (t + 2.7, f"nvidia-fabricmanager-start.sh[{spid}]", 'Started "Nvidia Fabric Manager"'),
        (t + 2.7, "systemd[1]", "Started nvidia-fabricmanager.service - NVIDIA fabric manager service."),
    ]
    stamps = tf.times([host.offset_s + w for w, _, _ in lines], host.tz, "%Y-%m-%dT%H:%M:%S%z").to_list()
    return tf.lines_bytes([f"{s} {host.name} {who}: {m}" for s, (_, who, m) in zip(stamps, lines)])

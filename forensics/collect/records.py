"""What the collector writes about itself: commands.jsonl entries and host.json (standard library only, Python 3.8)."""
from __future__ import annotations

import json

SKIPPED_TIME = "skipped (--duration reached)"  # the error of a command the time budget left out


def version():
    try:
        import forensics

        return forensics.__version__
    except Exception:  # noqa: BLE001
        return "unknown"


def command_record(name, argv, source, start, end, exit_code, nbytes, truncated, timed_out, error, stderr_tail,
                   raw_file, **extra):
    """One commands.jsonl entry (start/end: ISO-8601 text; extra: "sample" of a snapshot)."""
    entry = {
        "name": name, "argv": list(argv), "source": source, "start": start, "end": end, "exit_code": exit_code,
        "bytes": nbytes, "truncated": truncated, "timed_out": timed_out, "error": error,
        "stderr_tail": stderr_tail[-2048:], "raw_file": raw_file,
    }
    entry.update(extra)
    return entry


def commands_text(entries):
    """commands.jsonl: the entries in order of start, keys sorted."""
    return "".join(json.dumps(e, sort_keys=True) + "\n" for e in sorted(entries, key=lambda e: e["start"]))


def host_record(host, hostname, kernel, boot_time, boot_time_btime, timezone, utc_offset_s, wall, monotonic_s,
                ntp_offset_s, ntp_source, collector_version, python, argv, interrupted, duration, interval,
                started, ended, inventory):
    """host.json (times: ISO-8601 text; interrupted: the signal name or None; inventory: node.nics())."""
    return {
        "host": host, "hostname": hostname, "kernel": kernel,
        "boot_time": boot_time, "boot_time_btime": boot_time_btime,
        "timezone": timezone, "utc_offset_s": utc_offset_s,
        "clock": {"wall": wall, "monotonic_s": round(monotonic_s, 6), "ntp_offset_s": ntp_offset_s,
                  "ntp_source": ntp_source},
        "collector": {"version": collector_version, "python": python, "argv": list(argv),
                      "interrupted": interrupted is not None, "signal": interrupted,
                      "duration_s": float(duration), "interval_s": float(interval),
                      "started": started, "ended": ended},
        "nics": [dict((k, v) for k, v in n.items() if k not in ("physical", "bond")) for n in inventory],
    }


def host_json_text(record):
    return json.dumps(record, indent=1, sort_keys=True) + "\n"

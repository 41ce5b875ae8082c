"""Hostile bundles and inputs (issue 15): bounded memory on generated giant lines and tables, inflation
limits proportionate to the archive, no shipped table believed, no link followed in a parsed tables/
folder. Every case runs the command line through :func:`hostile_kit.hostile`, which asserts the
issue's five properties (one line and exit 2, or success with a stated warning; no traceback; peak
memory of the process tree under the bound the case states; nothing written or read outside; the
case then checks that nothing readable was lost). Large inputs are generated, never committed.

Which tests cover which item of the issue's list (module::test; checked by
test_the_item_map_names_real_tests below):

 1 memory from tiny inputs: test_hostile_inputs::test_parse_of_a_100_mb_single_line_stays_small,
   test_hostile_inputs::test_a_tiny_archive_with_a_giant_line_is_parsed_in_bounded_memory (slow),
   test_hostile_inputs::test_a_gzip_of_zeros_is_not_inflated,
   test_hostile_inputs::test_commands_over_a_table_of_many_rows_stay_bounded,
   test_hostile_inputs::test_reports_load_a_bounded_sample_of_many_events,
   test_hostile_inputs::test_redaction_rewrites_a_table_in_batches
 2 the collector follows links, secrets: test_collect_hostile::test_nccl_globs_follow_no_link,
   test_collect_hostile::test_env_filter, test_collect_hostile::test_secret_arguments_lose_their_values,
   test_collect_hostile::test_process_environ_read_only_through_the_filter,
   test_collect_hostile::test_nccl_log_of_another_user_is_refused (as root only)
 3 embedded tables trusted: test_hostile_inputs::test_shipped_tables_and_meta_are_not_believed,
   test_hostile_inputs::test_a_parsed_tables_folder_is_checked,
   test_hostile_inputs::test_the_manifest_member_list_is_checked
 4 disk bombs, a cache never cleaned: test_hostile_inputs::test_a_decompression_bomb_is_refused_before_it_fills_the_disk,
   test_bundle_read::test_gzip_bomb_refused_before_writing, test_hostile_limits::test_cache_ls_and_prune
 5 ad hoc SQL: test_hostile_query::test_a_query_stops_at_its_time_limit_with_one_line,
   test_hostile_query::test_ctrl_c_stops_a_query_within_a_second,
   test_hostile_query::test_a_memory_hungry_query_stops_at_the_memory_limit,
   test_hostile_query::test_spill_folder_is_private_and_not_pwd_tmp, test_hostile_query::test_max_memory_must_be_a_size,
   test_sql_safety::test_every_escape_is_refused_with_one_clear_line
 6 stale or lost results: test_hostile_limits::test_a_folder_of_loose_files_is_keyed_by_its_content,
   test_hostile_limits::test_a_broken_cache_entry_is_rebuilt_and_removed_tables_are_reparsed,
   test_hostile_limits::test_tables_removed_while_analysing_are_an_error,
   test_hostile_inputs::test_the_manifest_member_list_is_checked (a truncated archive: raw_missing),
   test_hostile_workdirs::test_a_killed_ingest_leaves_folders_that_the_next_run_removes,
   test_hostile_workdirs::test_cache_prune_removes_what_killed_runs_left
 7 redaction: test_redact_layout::test_layout_words_are_not_renamed,
   test_redact_layout::test_same_findings_with_layout_named_hosts,
   test_redact_layout::test_prompts_are_found_and_pseudonymised,
   test_redact_layout::test_prompt_in_a_real_capture_and_in_unparsed
 8 limits of one process: test_hostile_limits::test_the_table_sink_keeps_few_files_open_and_loses_no_row,
   test_hostile_limits::test_a_600_host_bundle_ingests_under_ulimit_n_256 (slow)
 9 collector process handling: test_collect_hostile::test_setsid_children_do_not_survive,
   test_collect_hostile::test_sighup_writes_a_partial_bundle, test_collect_hostile::test_duration_is_honoured_with_hung_tools,
   test_collect_hostile::test_single_line_of_300_mb_keeps_memory_small
10 terminal escapes: test_cli_output::test_query_table_shows_escapes_as_text,
   test_cli_output::test_log_escapes_never_reach_the_terminal
11 tracebacks instead of one line: test_cli_small_hostile::test_hostile_manifest_is_one_line,
   test_cli_small_hostile::test_hostile_host_files_are_reported_not_fatal,
   test_hostile_writes::test_a_cache_entry_whose_member_list_has_wrong_types_is_rebuilt,
   test_hostile_writes::test_garbage_parquet_given_to_redact_is_parsed_again_with_a_warning,
   test_hostile_writes::test_garbage_parquet_with_nothing_to_parse_again_is_one_line,
   test_cli_output::test_interval_map_struct_list_results_in_every_format,
   test_hostile_writes::test_export_onto_a_full_disk_is_one_line_that_blames_the_disk,
   test_hostile_writes::test_the_collector_on_a_full_disk_is_one_line_and_leaves_nothing,
   test_hostile_writes::test_a_full_cache_disk_is_not_blamed_on_the_archive
12 smaller: test_cli_small_hostile::test_bundle_host_option_with_newline,
   test_cli_small_hostile::test_host_names_that_break_paths_or_markdown_are_refused,
   test_cli_small_hostile::test_a_sosreport_whose_folders_link_outside_is_read_inside_only,
   test_cli_small_hostile::test_merging_private_bundles_gives_a_private_bundle,
   test_cli_small_hostile::test_xid_beyond_its_column_is_null_never_cut,
   test_hostile_writes::test_counters_above_2_63_are_kept_in_unparsed_never_wrapped

Every item has at least one case run through :func:`hostile_kit.hostile` (some through a fixture or
a helper that calls it). The tests named above that run in this process instead are unit checks
behind a command-line case, each for a stated reason:

- a function checked over many more values than commands could be run for (item 2: the environment
  and argument filters, one parametrised case per secret name; item 5: the 90+ SQL escapes; item 7:
  each prompt form, the command-line form being test_prompt_in_a_real_capture_and_in_unparsed;
  item 12: each host name that breaks a path or Markdown, the command-line form being
  test_bundle_host_option_with_newline);
- an internal bound made visible (item 1: the event sample and the redaction's batches, behind
  test_commands_over_a_table_of_many_rows_stay_bounded; item 8: the table sink's open files, behind
  the 600-host case; item 4: the gzip bomb refused by the reader before any write);
- the collector's timings shortened to keep the suite fast, which only a collector in this process
  can have patched (item 9: setsid children, hung tools within --duration; its SIGHUP and 300 MB
  cases run through the kit); another process's environment read (item 2), which needs a live
  process of known environment;
- a state made between two steps of one run (item 6: the tables removed while a run analyses).
"""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import polars as pl
import pytest

from forensics.simulate import SimConfig, Simulation  # noqa: F401 (the kit builds bundles with it)
from hostile_kit import CANARY, Repeat, hostile, small_bundle_members, write_tar_zst
from test_db_kit import T0, bundle_dir

MB = 1 << 20
DMESG_HEAD = b"[    1.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\n[    2.000000] "
DMESG_TAIL = b"\n[    3.000000] usb 1-1: new high-speed USB device number 2\n"


@pytest.fixture(scope="module")
def members():
    return small_bundle_members()


def test_parse_of_a_100_mb_single_line_stays_small(tmp_path):
    f = tmp_path / "dmesg.txt"
    src = Repeat(DMESG_HEAD, b"A", 100 * MB, DMESG_TAIL)
    with open(f, "wb") as fh:
        while block := src.read(8 * MB):
            fh.write(block)
    # 400 MiB: was 2.4 GB before lines were cut at 64 KiB
    hostile(["parse", f, "--format", "json", "--out", tmp_path / "out"], tmp_path, max_mb=400,
            warns="1 line(s) longer than 64 KiB cut", writes=[tmp_path / "out"])
    rows = pl.read_parquet(tmp_path / "out" / "kernel_log.parquet")
    assert rows.height == 3  # every line kept, the long one cut and marked
    long = rows.filter(pl.col("message").str.contains("bytes of this line dropped"))
    assert long.height == 1 and len(long["message"][0]) < 70_000


@pytest.mark.slow
def test_a_tiny_archive_with_a_giant_line_is_parsed_in_bounded_memory(tmp_path, members):
    """A few hundred KB of .tar.zst holding a 600 MB single-line dmesg (the issue's 1 GiB line peaked
    at 23 GB): parsed, the line cut and counted in coverage, the rest of the bundle intact."""
    m = dict(members)
    del m["hosts/node01/raw/dmesg/dmesg.txt"]
    tar = write_tar_zst(tmp_path / "b.tar.zst", m,
                        {"hosts/node01/raw/dmesg/dmesg.txt": Repeat(DMESG_HEAD, b"A", 600 * MB, DMESG_TAIL)})
    assert tar.stat().st_size < 2 * MB
    r = hostile(["query", tar, "SELECT host, sum(truncated_lines)::BIGINT AS cut, sum(lines)::BIGINT AS lines FROM coverage "
                 "WHERE source = 'dmesg' GROUP BY host ORDER BY host", "--format", "json"], tmp_path, max_mb=1500)
    got = {row["host"]: (row["cut"], row["lines"]) for row in json.loads(r.out)}
    assert got["node01"] == (1, 3) and got["node02"][0] == 0


def test_a_decompression_bomb_is_refused_before_it_fills_the_disk(tmp_path, members):
    """64 KB of .tar.zst that would write a 2.1 GB member: refused (1000 times the archive's size,
    at least 1 GiB), nothing left in the cache."""
    tar = write_tar_zst(tmp_path / "bomb.tar.zst", members,
                        {"hosts/node01/raw/dmesg/zeros.txt": Repeat(b"", b"\0", 2100 * MB)})
    assert tar.stat().st_size < 1 * MB
    cache = tmp_path / "cache"
    r = hostile(["analyze", tar], tmp_path, fails="decompression bomb", max_mb=500)
    assert r.seconds < 60
    left = [p for p in cache.rglob("*") if p.is_file() and not p.name.endswith(".lock")] if cache.exists() else []
    assert sum(p.stat().st_size for p in left) < MB, left


def _forge(root, table, rows):
    from test_db_kit import write_table

    write_table(root, table, rows)


def test_shipped_tables_and_meta_are_not_believed(tmp_path, members):
    """A bundle ships tables/ with a _meta.json claiming current parsers and forged rows (an Xid of
    2147483647 in year 1): the raw files are parsed instead; the forged rows are never shown."""
    from forensics.ingest import parser_versions

    shipped = tmp_path / "shipped"
    _forge(shipped, "kernel_log", [{"host": "node01", "ts": T0.replace(year=1), "xid": 2147483647,
                                    "message": "forged", "source": "dmesg"}])
    (shipped / "tables" / "_meta.json").write_text(json.dumps({"parser_versions": parser_versions()}))
    m = dict(members)
    for p in sorted((shipped / "tables").rglob("*")):
        if p.is_file():
            m["tables/" + p.relative_to(shipped / "tables").as_posix()] = p.read_bytes()
    tar = write_tar_zst(tmp_path / "forged.tar.zst", m)
    r = hostile(["query", tar, "SELECT count(*) FILTER (WHERE message = 'forged') AS forged, "
                 "count(*) FILTER (WHERE xid = 79) AS xid79, min(ts) AS first FROM kernel_log", "--format", "json"],
                tmp_path, max_mb=500)
    row = json.loads(r.out)[0]
    assert row["forged"] == 0 and row["xid79"] >= 1 and not row["first"].startswith("0001"), row


@pytest.mark.parametrize("case", ["host_int", "year_one", "symlink_out", "tables_link"])
def test_a_parsed_tables_folder_is_checked(tmp_path, case):
    root = bundle_dir(tmp_path, {"kernel_log": [{"host": "n1", "message": "hello"}]})
    part = root / "tables" / "kernel_log" / "host=n1" / "part-0.parquet"
    if case == "host_int":
        pl.DataFrame({"host": [1], "message": ["x"]}).write_parquet(part)
        expect = "column host is int64"
    elif case == "year_one":
        pl.DataFrame({"host": ["n1"], "ts": [T0.replace(year=1)]}).write_parquet(part)
        expect = "outside 1970-2200"
    elif case == "symlink_out":
        outside = tmp_path / "outside.parquet"
        pl.DataFrame({"host": ["n9"], "message": [CANARY]}).write_parquet(outside)
        os.symlink(outside, root / "tables" / "kernel_log" / "host=n1" / "part-1.parquet")
        expect = "symbolic link"
    else:
        other = tmp_path / "elsewhere"
        (root / "tables").rename(other)
        os.symlink(other, root / "tables")
        expect = "symbolic link"
    for args in (["query", root, "SELECT message FROM kernel_log"], ["analyze", root]):
        hostile(args, tmp_path, fails=expect, max_mb=400)


def test_reports_load_a_bounded_sample_of_many_events(tmp_path):
    """The report and the trace load at most MAX_EVENTS events: every warning first, info thinned
    evenly per host, the total said."""
    import forensics
    from forensics.report import eventsample
    from test_db_kit import at

    rows = [{"host": h, "ts": at(i), "message": f"usb {i}", "source": "dmesg", "level": "info"}
            for h in ("n1", "n2") for i in range(500)]
    rows += [{"host": "n2", "ts": at(1000 + i), "message": "NVRM: Xid 79", "xid": 79, "source": "dmesg",
              "level": "err"} for i in range(5)]
    b = forensics.open_bundle(bundle_dir(tmp_path, {"kernel_log": rows}))
    try:
        df, total = eventsample.load(b, "host, severity, ts_aligned", max_events=100)
        every, _ = eventsample.load(b, "host, severity, ts_aligned")
    finally:
        b.close()
    assert total == every.height >= 1005
    alerts = every.filter(pl.col("severity") != "info").height
    assert alerts >= 5 and df.filter(pl.col("severity") != "info").height == min(alerts, 50)
    infos = df.filter(pl.col("severity") == "info")
    assert 20 <= infos.height <= 90 and set(infos["host"]) == {"n1", "n2"}
    assert df["ts_aligned"].is_sorted()


@pytest.mark.parametrize("damage", ["none", "raw_missing", "host_json_altered", "raw_resized", "raw_altered"])
def test_the_manifest_member_list_is_checked(tmp_path, members, damage):
    """`forensics bundle`/`redact` list every member's size and SHA-256 in the manifest; a member
    missing (a truncated archive) or altered is one line, exit 2. Raw files are read from the
    archive, never extracted: one altered in place (same size) is caught by its SHA-256 as it is read."""
    import io
    import tarfile

    from forensics.bundle.write import write_tree

    stage = tmp_path / "stage"
    for rel, data in members.items():
        (stage / rel).parent.mkdir(parents=True, exist_ok=True)
        (stage / rel).write_bytes(data)
    good = write_tree(stage, tmp_path / "good.tar")
    listed = json.loads(tarfile.open(good).extractfile("manifest.json").read())["members"]
    assert listed["hosts/node01/host.json"]["size"] == len(members["hosts/node01/host.json"])
    victim = {"raw_missing": "hosts/node02/raw/dmesg/dmesg.txt", "host_json_altered": "hosts/node01/host.json",
              "raw_resized": "hosts/node01/raw/dmesg/dmesg.txt", "raw_altered": "hosts/node01/raw/dmesg/dmesg.txt"}.get(damage)
    bad = tmp_path / "bad.tar"
    with tarfile.open(good) as src, tarfile.open(bad, "w") as out:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if m.name == victim:
                if damage == "raw_missing":
                    continue
                data = data.replace(b"0", b"1") if damage in ("host_json_altered", "raw_altered") else data + b"extra line\n"
                assert damage != "raw_altered" or len(data) == m.size
                m.size = len(data)
            out.addfile(m, io.BytesIO(data) if data is not None else None)
    q = ["query", bad, "SELECT count(*) AS n FROM kernel_log", "--format", "json"]
    if damage == "none":
        assert json.loads(hostile(q, tmp_path, max_mb=500).out)[0]["n"] > 0
    else:
        assert victim in hostile(q, tmp_path, fails="damaged bundle", max_mb=500).err


def test_a_gzip_of_zeros_is_not_inflated(tmp_path):
    """A .log.gz of zeros (512 MB inflated; the issue's 1 MB one inflated to 2.2 GB in memory) given to
    analyze: its decompressed start is recognised by nothing, so it is skipped without being inflated."""
    import gzip

    f = tmp_path / "dmesg.log.gz"
    with gzip.open(f, "wb", compresslevel=9) as gz:
        block = b"\0" * MB
        for _ in range(512):
            gz.write(block)
    assert f.stat().st_size < 1 * MB
    # a warning saying it was skipped, then the one error line; inflating it would take 512 MB more
    hostile(["analyze", f, "--host", "n1"], tmp_path, warns="skipping dmesg.log.gz", fails="no file recognised",
            max_mb=450)


def test_redaction_rewrites_a_table_in_batches(tmp_path, monkeypatch):
    """Redaction reads and writes a table BATCH_ROWS rows at a time (memory bounded by the batch,
    not the table): the result equals the whole table rewritten, row groups and all."""
    import pyarrow.parquet as pq

    from forensics import schema
    from forensics.redact import tables

    class Upper:
        def strings(self, values):
            return [v.upper() for v in values]

    df = schema.conform(pl.DataFrame({"host": [f"h{i % 3}" for i in range(10)], "message": [f"m{i}" for i in range(10)]}),
                        "kernel_log")
    src = tmp_path / "src.parquet"
    pq.write_table(df.to_arrow().cast(schema.arrow_schema("kernel_log")), src)
    monkeypatch.setattr(tables, "BATCH_ROWS", 3)
    tables.rewrite_parquet(src, tmp_path / "out.parquet", Upper())
    out = pl.read_parquet(tmp_path / "out.parquet")
    assert out["host"].to_list() == [f"H{i % 3}" for i in range(10)]
    assert out["message"].to_list() == [f"M{i}" for i in range(10)]
    assert pq.ParquetFile(tmp_path / "out.parquet").schema_arrow == pq.ParquetFile(src).schema_arrow


ROWS = 1_000_000


@pytest.fixture(scope="module")
def many_rows(tmp_path_factory):
    """A parsed bundle folder whose kernel_log holds ROWS rows on two hosts (a few MB of Parquet; the
    issue's 10^7-row one drove redact past 6 GB, report to 5.3 GB and the trace past 6 GB)."""
    from forensics import schema

    tmp = tmp_path_factory.mktemp("rows")
    i = pl.int_range(0, ROWS, eager=True)
    df = pl.select(host=pl.when(i % 2 == 0).then(pl.lit("n1")).otherwise(pl.lit("n2")),
                   ts=pl.lit(T0) + pl.duration(milliseconds=i), source=pl.lit("dmesg"), level=pl.lit("info"),
                   line_no=i, message=pl.format("usb 1-1: new high-speed USB device number {} using xhci_hcd", i % 1000))
    df = schema.conform(df, "kernel_log")
    return bundle_dir(tmp, {"kernel_log": df, "hosts": [{"host": "n1"}, {"host": "n2"}]})


def _big_dmesg_bundle(path: Path, members: dict) -> Path:
    """A small simulated bundle whose node01 dmesg is ROWS generated lines (redact takes bundles, and
    rewrites only tables this machine parsed: the raw lines are what it streams)."""
    # (without the InfiniBand outputs: redaction refuses their ib_gids table today, an IPv4-mapped GID
    # ':10.0.0.10' left as it was, a separate defect)
    m = {k: v for k, v in members.items() if "/raw/infiniband/" not in k}
    del m["hosts/node01/raw/dmesg/dmesg.txt"]
    line = b"[    5.000000] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
    return write_tar_zst(path, m, {"hosts/node01/raw/dmesg/dmesg.txt": Repeat(line, line, ROWS * len(line))})


@pytest.mark.slow  # (about 20 CPU s each)
@pytest.mark.parametrize("cmd", ["report", "perfetto", "redact"])
def test_commands_over_a_table_of_many_rows_stay_bounded(many_rows, members, tmp_path, cmd):
    """report and export --perfetto over 10^6 kernel_log rows, redact over a bundle of 10^6 raw dmesg
    lines: peak memory of the process tree bounded; the report and the trace say how many events they
    sampled out of how many (nothing lost silently); redaction keeps every line."""
    out = tmp_path / {"report": "r.html", "perfetto": "t.json", "redact": "red.tar"}[cmd]
    args = {"report": ["report", many_rows, "--out", out, "--quiet"],
            "perfetto": ["export", many_rows, "--perfetto", out, "--quiet"],
            "redact": ["redact", _big_dmesg_bundle(tmp_path / "b.tar.zst", members) if cmd == "redact" else None,
                       "--out", out, "--quiet", "--key-file", tmp_path / "red.key"]}[cmd]
    # (redact's tree: its own process and the ingest workers that parse the redacted lines again)
    r = hostile(args, tmp_path, max_mb=1300 if cmd == "redact" else 700, writes=[out, tmp_path / "red.key"])
    if cmd == "redact":
        q = hostile(["query", out, "SELECT count(*) AS n FROM kernel_log WHERE message LIKE 'usb 1-1: new high-speed%'",
                     "--format", "json"], tmp_path, max_mb=1300)  # (parsed again: workers)
        assert json.loads(q.out)[0]["n"] >= ROWS  # every generated line, redacted and parsed again
    elif cmd == "report":
        assert re.search(r"events: [0-9]+ of %d loaded" % ROWS, out.read_text()), "the sample is not stated"
    else:
        assert "of %d (warning and critical first" % ROWS in out.read_text(), "the sample is not stated"


def test_the_item_map_names_real_tests():
    """The map in this module's docstring names tests that exist, and covers the issue's items 1-12."""
    here = Path(__file__).parent
    items = re.findall(r"^ ?(\d+) ", __doc__, re.M)
    assert [int(i) for i in items] == list(range(1, 13))
    for module, name in re.findall(r"(test_\w+)::(test_\w+)", __doc__):
        assert re.search(rf"^def {name}\(", (here / f"{module}.py").read_text(), re.M), f"{module}::{name}"

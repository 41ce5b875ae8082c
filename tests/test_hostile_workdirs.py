"""Work folders a killed run leaves (issue 15, item 6: a killed `analyze` left ``.tables-*`` and
``.hosts-*`` in the cache entry for good): the next parse removes them, and never the folders of a
run still in progress (:mod:`forensics.bundle.scratch`); `forensics cache prune` removes them too,
and an older version's folders (no lock file) once unchanged for hours."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from forensics.bundle import scratch
from hostile_kit import hostile, small_bundle_members, write_tar_zst

LEFT = (".tables-", ".hosts-", ".partial-")


def _write_dir(root: Path, members: dict[str, bytes]) -> Path:
    for name, data in members.items():
        p = root / name
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)
    return root


def _left(folder: Path) -> list[str]:
    return sorted(n for n in os.listdir(folder) if n.startswith(LEFT))


# An ingest killed (SIGKILL: no handler runs) while both its folders exist: after the first host's
# parse, in the main process (`merge_host` of the pool, patched to announce itself and wait).
_KILLED_INGEST = """
import sys, time
import forensics.ingest.pool as pool
def stuck(*a, **k):
    print("parsing", flush=True)
    time.sleep(600)
pool.merge_host = stuck
from forensics.ingest import ingest_bundle
ingest_bundle(sys.argv[1])
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="flock and SIGKILL semantics of Linux")
def test_a_killed_ingest_leaves_folders_that_the_next_run_removes(tmp_path):
    bundle = _write_dir(tmp_path / "b", small_bundle_members(2))
    env = dict(os.environ, FORENSICS_INGEST_PROCESSES="2", TZ="UTC", LC_ALL="C")
    proc = subprocess.Popen([sys.executable, "-c", _KILLED_INGEST, str(bundle)], stdout=subprocess.PIPE, text=True,
                            env=env, start_new_session=True)
    try:
        assert proc.stdout.readline().strip() == "parsing"
        left = _left(bundle)
        assert any(n.startswith(".tables-") for n in left) and any(n.startswith(".hosts-") for n in left), left
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
    assert _left(bundle) == left  # nothing ran at the kill: the folders are there
    r = hostile(["query", bundle, "SELECT count(DISTINCT host) AS hosts FROM kernel_log", "--format", "json"],
                tmp_path, max_mb=600, writes=[bundle])
    assert json.loads(r.out) == [{"hosts": 2}]
    assert _left(bundle) == [], "the killed run's work folders are still in the bundle's tree"
    assert (bundle / "tables" / "_meta.json").is_file()


_OWNER = """
import sys, time
from pathlib import Path
from forensics.bundle import scratch
print(scratch.make(Path(sys.argv[1]), ".tables-"), flush=True)
time.sleep(600)
"""


def test_a_folder_whose_run_goes_on_is_never_removed(tmp_path):
    proc = subprocess.Popen([sys.executable, "-c", _OWNER, str(tmp_path)], stdout=subprocess.PIPE, text=True)
    try:
        work = Path(proc.stdout.readline().strip())
        (work / "part.parquet").write_bytes(b"x")
        assert scratch.sweep(tmp_path, (".tables-",), stale_s=0) == []  # (stale_s: only for folders without a lock)
        assert (work / "part.parquet").is_file()
    finally:
        proc.kill()
        proc.wait(10)
    assert scratch.sweep(tmp_path, (".tables-",)) == [work.name]  # its owner is gone
    assert os.listdir(tmp_path) == []


def test_own_folders_are_left_to_this_process_and_released(tmp_path):
    work = scratch.make(tmp_path, ".hosts-")
    assert scratch.sweep(tmp_path, (".hosts-",), stale_s=0) == [] and work.is_dir()
    scratch.remove(work)
    assert os.listdir(tmp_path) == []
    name = scratch.make(tmp_path, ".tables-old-", create=False)  # a name reserved for a rename
    assert not name.exists() and (tmp_path / (name.name + scratch.OWNER)).is_file()
    scratch.release(name)
    assert os.listdir(tmp_path) == []


def test_links_and_files_named_like_work_folders_are_left_alone(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    root = tmp_path / "root"
    root.mkdir()
    os.symlink(outside, root / ".tables-link")
    (root / ".hosts-file").write_text("x")
    os.symlink(tmp_path / "nowhere.owner", root / ".tables-x.owner")  # a lock file that is a link
    (root / ".tables-x").mkdir()
    assert scratch.sweep(root, (".tables-", ".hosts-")) == []
    assert (outside / "keep.txt").read_text() == "keep" and (root / ".tables-x").is_dir()


def test_cache_prune_removes_what_killed_runs_left(tmp_path):
    tar = write_tar_zst(tmp_path / "b.tar.zst", small_bundle_members(2))
    hostile(["query", tar, "SELECT count(*) FROM kernel_log"], tmp_path, max_mb=600)
    cache = tmp_path / "cache"
    (entry,) = [p for p in cache.iterdir() if p.is_dir() and not p.name.startswith(".")]
    from forensics.bundle.read import find_root

    root = find_root(entry)
    dead = subprocess.run([sys.executable, "-c", _OWNER.replace("time.sleep(600)", ""), str(root)],
                          capture_output=True, text=True, check=True).stdout.strip()
    old, fresh = root / ".hosts-0ld", root / ".hosts-fresh"  # an older version's (no lock file)
    for d in (old, fresh):
        (d / "0").mkdir(parents=True)
    os.utime(old, (time.time() - scratch.STALE_S - 60,) * 2)
    partial = cache / ".partial-0123456789abcdef-dead"
    partial.mkdir()
    os.utime(partial, (time.time() - scratch.STALE_S - 60,) * 2)
    r = hostile(["cache", "prune"], tmp_path, max_mb=300, writes=[cache])
    assert "removed 3 work folders" in r.out, r.out
    assert not Path(dead).exists() and not old.exists() and not partial.exists()
    assert fresh.is_dir()  # may be a run of an older version in progress
    assert (root / "tables" / "_meta.json").is_file()

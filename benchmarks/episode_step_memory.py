"""Peak memory of one detection step alone: the derived ``raw.gpu_episode_rows`` (queries/views/50_gpu_episodes.sql)
over a parsed bundle's ``gpu_samples``, copied to Parquet as :mod:`forensics.db.derived` does, under a given
DuckDB ``memory_limit`` (issue 15: on 64 nodes x 1 h this step held 2.5 GB with the old default budget).

    /usr/bin/time -v python benchmarks/episode_step_memory.py LIMIT_BYTES TABLES_DIR [SPILL_DIR]

TABLES_DIR is the ``tables/`` folder of a parsed bundle (e.g. a cache entry's); run it under
``/usr/bin/time -v`` for the peak resident memory and CPU seconds, one limit per process, two limits side by side.
"""
import sys
import tempfile
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent


def main(argv: list[str]) -> int:
    limit, tables = int(argv[0]), Path(argv[1])
    sql = (ROOT / "queries" / "views" / "50_gpu_episodes.sql").read_text()
    view = sql[sql.index("CREATE OR REPLACE VIEW raw.gpu_episode_rows"):sql.index("CREATE OR REPLACE VIEW gpu_episodes")]
    spill = tempfile.mkdtemp(prefix="episode-step-", dir=argv[2] if len(argv) > 2 else None)
    con = duckdb.connect()
    con.execute(f"SET memory_limit = '{limit}B'")
    con.execute(f"SET temp_directory = '{spill}'")
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE SCHEMA raw")
    con.execute(f"CREATE VIEW raw.gpu_samples AS SELECT * FROM read_parquet('{tables}/gpu_samples/*/*.parquet', "
                "hive_partitioning = false, union_by_name = true)")
    print("gpu_samples rows:", con.execute("SELECT count(*) FROM raw.gpu_samples").fetchone()[0])
    con.execute((ROOT / "queries" / "views" / "00_macros.sql").read_text())  # (flag_episodes and the other macros)
    con.execute(view)
    out = Path(spill) / "out.parquet"
    con.execute(f"COPY (SELECT * FROM raw.gpu_episode_rows) TO '{out}' (FORMAT parquet, COMPRESSION zstd)")
    print("episodes, samples:", con.execute(f"SELECT count(*), sum(samples) FROM read_parquet('{out}')").fetchone())
    out.unlink()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

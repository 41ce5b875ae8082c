import os
import time

# The whole suite runs with a pinned zone and locale: parsers of local-time sources must not
# depend on the machine they run on.
os.environ["TZ"] = "UTC"
os.environ["LC_ALL"] = "C"
time.tzset()


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def parse_cache(tmp_path_factory):
    """One parsed-table cache for the session: each sample bundle is parsed once, whether a test
    analyses it in this process (cache_dir=parse_cache) or runs the executable (cli_env)."""
    return tmp_path_factory.mktemp("parse-cache")


@pytest.fixture(scope="module")
def sim_findings(tmp_path_factory):
    """Findings of small simulated bundles, each written and analysed once per test module:
    ``sim_findings(scenario, **SimConfig fields)`` gives the findings as a list of dicts."""
    from forensics.analysis import analyze_paths
    from forensics.simulate import SimConfig, write_bundle
    root = tmp_path_factory.mktemp("sim-findings")
    done = {}

    def get(scenario, **kw):
        key = (scenario, tuple(sorted(kw.items())))
        if key not in done:
            path = root / f"{len(done)}.tar"
            write_bundle(SimConfig(scenario=scenario, **kw), path, tables=False)
            done[key] = analyze_paths([path], cache_dir=root / "cache").findings.to_dicts()
        return done[key]
    return get


@pytest.fixture(scope="session")
def cli_env(parse_cache):
    """Environment for running the `forensics` executable in a subprocess: pinned zone and locale,
    the session's parsed-table cache."""
    return {**os.environ, "TZ": "UTC", "LC_ALL": "C", "FORENSICS_CACHE_DIR": str(parse_cache)}


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray for the whole run (``ray.init(num_cpus=2)``), shared by every Ray engine test;
    they skip, saying why, where Ray is not installed (the README's test command installs it)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test,ray]'): "
                                            "the Ray engine's tests are skipped")
    from forensics.engine.executors import start_local_ray

    start_local_ray(ray, 2)  # as `--engine ray` starts it
    try:
        yield ray
    finally:
        ray.shutdown()

import os
import time

# The whole suite runs with a pinned zone and locale: parsers of local-time sources must not
# depend on the machine they run on.
os.environ["TZ"] = "UTC"
os.environ["LC_ALL"] = "C"
time.tzset()


import pytest  # noqa: E402


@pytest.fixture(scope="session")
def cli_env(tmp_path_factory):
    """Environment for running the `forensics` executable in a subprocess: pinned zone and locale,
    one parsed-table cache shared by every test of the session (each sample bundle parsed once)."""
    return {**os.environ, "TZ": "UTC", "LC_ALL": "C", "FORENSICS_CACHE_DIR": str(tmp_path_factory.mktemp("cli-cache"))}


@pytest.fixture(scope="session")
def ray_local():
    """One local Ray for the whole run (``ray.init(num_cpus=2)``), shared by every Ray engine test;
    they skip, saying why, where Ray is not installed (the README's test command installs it)."""
    ray = pytest.importorskip("ray", reason="Ray is not installed (pip install -e '.[test,ray]'): "
                                            "the Ray engine's tests are skipped")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        yield ray
    finally:
        ray.shutdown()

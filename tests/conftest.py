"""Shared fixtures. Real PostgreSQL, not mocks: throwaway lab clusters from whatever binaries exist.

Tests that use a cluster fixture get the `pg` marker automatically. Without binaries they skip,
unless PGIO_REQUIRE_PG is set (CI sets it), in which case they fail loudly.
"""

from __future__ import annotations

import os
import time

import pytest
from fixture_recording import write_fixture
from machine_share import machine_share, remove_locks

from pgio_tui.workloads.cluster import Cluster
from pgio_tui.workloads.pg_binaries import ClusterError, find_bindir

PG_FIXTURES = {"pg_bindir", "pg_cluster", "make_cluster"}


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items):
    for item in items:
        if PG_FIXTURES & set(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.pg)


@pytest.fixture(scope="session")
def pg_bindir():
    """The server bin directory every cluster fixture uses (PGIO_PG_BINDIR picks one)."""
    try:
        return find_bindir()
    except ClusterError as e:
        if os.environ.get("PGIO_REQUIRE_PG"):
            pytest.fail(f"PGIO_REQUIRE_PG is set but {e}", pytrace=False)
        pytest.skip(f"no PostgreSQL binaries: {e}")


@pytest.fixture(scope="session")
def pg_cluster(pg_bindir):
    """One started cluster with default settings, shared by the session: do not change its settings."""
    with Cluster(bindir=pg_bindir) as cluster:
        yield cluster


@pytest.fixture
def make_cluster(pg_bindir):
    """make_cluster(**settings) -> a started cluster of your own, destroyed after the test."""
    made: list[Cluster] = []

    def make(**settings) -> Cluster:
        cluster = Cluster(bindir=pg_bindir, settings=settings)
        made.append(cluster)
        cluster.init()
        cluster.start()
        return cluster

    yield make
    for cluster in made:
        cluster.destroy()


@pytest.fixture(autouse=True)
def _machine_share(request):
    """Under pytest-xdist (the README's test command), a test marked `solo` runs with no other test
    at once (tests/machine_share.py says why); run alone, pytest needs no lock."""
    run = _xdist_run(request.config)
    if not run:
        yield
        return
    with machine_share(run, solo=request.node.get_closest_marker("solo") is not None):
        yield


def _xdist_run(config) -> str | None:
    """The run's id in a pytest-xdist worker (not from the environment: a pytest a test starts in a
    subprocess inherits it, and must not take the lock its parent holds)."""
    worker = getattr(config, "workerinput", None)
    return worker.get("testrunuid") if worker else None


def pytest_sessionfinish(session):
    if run := _xdist_run(session.config):
        remove_locks(run)


@pytest.fixture(autouse=True)
def _isolated_config(tmp_path, monkeypatch):
    """No test sees the user's themes or TEXTUAL_THEME: pictures and theme lists stay the same."""
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))
    monkeypatch.delenv("TEXTUAL_THEME", raising=False)


@pytest.fixture
def utc(monkeypatch):
    """Clock times on screen and in parsing are UTC, whatever the machine's zone."""
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.fixture(scope="module")
def fixture_file(tmp_path_factory):
    """The deterministic 300-tick fixture recording (tests/fixture_recording.py), one per module."""
    return write_fixture(tmp_path_factory.mktemp("fixture") / "fixture.pgio", n=300)

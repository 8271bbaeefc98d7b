"""Shared fixtures (where the offline data mirror and the repository are) and how the tests run in parallel.

pyproject.toml runs them on two pytest-xdist workers (``--numprocesses=2 --dist=loadgroup``). Which tests
must stay on one worker, and in which order the work is handed out, is decided here
(:func:`pytest_collection_modifyitems`):

* every test that uses the shared ``finished_run`` (tests/e2e/conftest.py), directly or through another
  fixture, is in one group, run by one worker, first: the run happens once, and the tests that edit or
  rerun inside its directory never run at the same time;
* the tests of a module with a module-scoped fixture (a trained model, a download run, a SLURM cluster,
  a spaCy parse) stay together, so that fixture is built once;
* everything else is handed out test by test to whichever worker is free, longest kinds first (end-to-end
  groups, other end-to-end tests, unit groups, unit tests), so the two workers finish together; a test that
  makes a run of its own and compares it with ``finished_run`` at the end (``wait_for_finished_run``) comes
  after the end-to-end tests, by when the shared run is made: handed out first, it waited for it, idle.

``pytest -n 0``, ``pytest -p no:xdist`` or a checkout without pytest-xdist run everything in this
process, in file order.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.paths import MIRROR, REPOSITORY

#: The group of the tests that use the session's shared run of the small config.
FINISHED_RUN_GROUP = "finished_run"
#: Fixture scopes whose value is built once per worker that runs a test needing it.
SHARED_SCOPES = ("class", "module", "package")
#: Each test's worker group (None: any worker), set on pytest-xdist workers.
GROUP = pytest.StashKey[str | None]()


@pytest.fixture(scope="session")
def mirror_dir() -> Path:
    """The offline mirror of the datasets (../shared/data beside the repository unless overridden)."""
    if not MIRROR.is_dir():
        pytest.skip(f"data mirror not found at {MIRROR} (set NLP_ROBUSTNESS_MIRROR)")
    return MIRROR


@pytest.fixture(scope="session")
def repository() -> Path:
    return REPOSITORY


@pytest.fixture(scope="session")
def tiny_marian_dir(mirror_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A tiny MarianMT English->French model saved with save_pretrained (tests/tiny_models/marian.py), built
    once per session (and per worker) from the mirror's Tatoeba pairs."""
    from tests.tiny_models.marian import build_tiny_marian

    return build_tiny_marian(tmp_path_factory.mktemp("tiny-marian") / "model")


@pytest.fixture(scope="session")
def tiny_classifier(tmp_path_factory: pytest.TempPathFactory, mirror_dir: Path) -> Path:
    """A tiny BERT sentiment classifier built from mirror reviews (tests/tiny_models/classifier.py), once per
    session (per worker): its ``save_pretrained`` directory."""
    from tests.tiny_models.classifier import build_tiny_classifier  # torch and transformers only where needed

    return build_tiny_classifier(tmp_path_factory.mktemp("tiny_classifier") / "model", mirror=mirror_dir)


def pytest_addoption(parser: pytest.Parser, pluginmanager: pytest.PytestPluginManager) -> None:
    """Without pytest-xdist (not installed, or ``-p no:xdist``) pyproject.toml's ``--numprocesses`` and
    ``--dist`` are accepted and ignored: the tests run in this process."""
    if not pluginmanager.has_plugin("xdist"):
        group = parser.getgroup("xdist", "pytest-xdist is not active: its options are accepted and ignored")
        group.addoption("--numprocesses", dest="numprocesses", default=None, help="ignored without pytest-xdist")
        group.addoption("--dist", dest="dist", default="no", help="ignored without pytest-xdist")


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config.option, "loadscopereorder"):
        # hand out the groups in the order pytest_collection_modifyitems puts them in, not by their size
        config.option.loadscopereorder = False


def _group(item: pytest.Item) -> str | None:
    """The worker group of ``item``: the shared run's, its module's (a fixture built once per module), or none."""
    if FINISHED_RUN_GROUP in getattr(item, "fixturenames", ()):
        return FINISHED_RUN_GROUP
    # pytest has no public way to a test's fixture definitions; without one, modules are not kept together
    definitions = getattr(getattr(item, "_fixtureinfo", None), "name2fixturedefs", {})
    if any(fixtures and fixtures[-1].scope in SHARED_SCOPES for fixtures in definitions.values()):
        return item.nodeid.split("::", 1)[0]
    return None


def _rank(item: pytest.Item, group: str | None) -> int:
    """Where ``item`` comes in the order the work is handed out: the longest kinds of work first."""
    if group == FINISHED_RUN_GROUP:
        return 0  # one worker's whole first part; every other worker starts beside it
    if "wait_for_finished_run" in getattr(item, "fixturenames", ()):
        return 3  # a run of its own, then compared with the shared run: after the other end-to-end tests
    end_to_end = item.get_closest_marker("e2e") is not None
    return (1 if group else 2) if end_to_end else (4 if group else 5)


def _name_group_in_node_id(item: pytest.Item, group: str) -> None:
    """pytest-xdist (3.8) tells its scheduler a test's group by appending ``@<group>`` to the test's node id,
    which it writes to ``item._nodeid``; pytest 9.2 keeps the id in ``item._id`` and no longer reads that
    field, so the groups are silently ignored (pytest-xdist issue #1386). Write the id where pytest keeps it."""
    if item.nodeid.endswith(f"@{group}"):
        return  # pytest-xdist did it
    suffixed = f"{item.nodeid}@{group}"
    if hasattr(item, "_id"):
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(suffixed)
    if item.nodeid != suffixed:
        raise pytest.UsageError(f"cannot put {item.nodeid} in the pytest-xdist group {group!r} with this pytest")


@pytest.hookimpl(wrapper=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]):
    """On pytest-xdist workers with ``--dist=loadgroup``: the groups and the order described at the top."""
    if not (hasattr(config, "workerinput") and config.getoption("loadgroup", False)):
        return (yield)
    for item in items:
        item.stash[GROUP] = _group(item)
        if item.stash[GROUP]:
            item.add_marker(pytest.mark.xdist_group(item.stash[GROUP]))
    items.sort(key=lambda item: _rank(item, item.stash[GROUP]))  # stable: file order within a rank
    result = yield
    for item in items:
        if group := item.stash.get(GROUP, None):
            _name_group_in_node_id(item, group)
    return result

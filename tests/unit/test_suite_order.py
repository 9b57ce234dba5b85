"""The order the parallel suite hands out its files in (tests/conftest.py): the largest time budget
first, so the long single-test files (the conformance suites, vitest) never start last."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest

from tests.conftest import pytest_collection_modifyitems


class FakeItem:
    def __init__(self, nodeid: str, timeout: float | None = None) -> None:
        self.nodeid = nodeid
        self.timeout = timeout

    def get_closest_marker(self, name: str) -> Any:
        if name == "timeout" and self.timeout is not None:
            return pytest.mark.timeout(self.timeout).mark
        return None


def config(dist: str) -> Any:
    return SimpleNamespace(option=SimpleNamespace(dist=dist), getini=lambda name: "120")


def files(items: list[Any]) -> list[str]:
    return list(dict.fromkeys(item.nodeid.split("::")[0] for item in items))


def suite() -> list[Any]:
    return [
        *(FakeItem(f"tests/unit/test_many.py::test_{i}") for i in range(5)),  # 5 x 120 s
        FakeItem("tests/conformance/test_conformance.py::test_whole_client_suite", 900),
        FakeItem("tests/lsp/test_one.py::test_a"),
        FakeItem("tests/lsp/test_one.py::test_b"),  # 2 x 120 s
        FakeItem("tests/extension/test_vitest.py::test_vitest_unit_tests", 450),
    ]


def test_the_parallel_run_takes_the_files_with_the_largest_budget_first() -> None:
    items = suite()
    pytest_collection_modifyitems(config("loadfile"), items)  # type: ignore[arg-type]
    assert files(items) == ["tests/conformance/test_conformance.py", "tests/unit/test_many.py",
                            "tests/extension/test_vitest.py", "tests/lsp/test_one.py"]
    # a file's tests stay together and in their order
    assert [i.nodeid for i in items][1:6] == [f"tests/unit/test_many.py::test_{i}" for i in range(5)]


def test_a_run_without_loadfile_keeps_the_collection_order() -> None:
    items = suite()
    before = [i.nodeid for i in items]
    pytest_collection_modifyitems(config("no"), items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == before

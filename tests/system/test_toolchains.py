"""A missing toolchain skips a port test locally and fails it under CI."""

from __future__ import annotations

import pytest

from tests.support.toolchains import require_tools

MISSING = "snapkv-no-such-compiler"


def test_missing_toolchain_fails_under_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("CI", "true")
    with pytest.raises(pytest.fail.Exception, match=MISSING):
        require_tools("sh", MISSING)


def test_missing_toolchain_skips_outside_ci(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("CI", raising=False)
    with pytest.raises(pytest.skip.Exception, match=MISSING):
        require_tools(MISSING)


def test_present_toolchain_is_found() -> None:
    assert require_tools("sh")["sh"].endswith("sh")

"""nv.base.data_dir: MXNet's data directory, MXNET_HOME else ~/.mxnet, read at each call."""

from __future__ import annotations

import os

import pytest

from nnvmpy import base


def test_data_dir_defaults_to_dot_mxnet_in_home(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MXNET_HOME", raising=False)
    monkeypatch.setattr(base.platform, "system", lambda: "Linux")
    expected = os.path.join(os.path.expanduser("~"), ".mxnet")
    assert base.data_dir_default() == expected
    assert base.data_dir() == expected


def test_data_dir_follows_mxnet_home_at_each_call(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MXNET_HOME", "/tmp/mxnet_data")
    assert base.data_dir() == "/tmp/mxnet_data"
    monkeypatch.setenv("MXNET_HOME", "/elsewhere")
    assert base.data_dir() == "/elsewhere"


def test_data_dir_default_on_windows_is_under_appdata(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base.platform, "system", lambda: "Windows")
    monkeypatch.setenv("APPDATA", "/appdata")
    assert base.data_dir_default() == os.path.join("/appdata", "mxnet")

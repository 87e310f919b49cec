# Shared fixtures: the repository root (for configs and the demo graph) and a quiet runtime.
import os
import pathlib

import pytest

import switchyard

SOURCE_DIR = pathlib.Path(os.environ.get("SWITCHYARD_SOURCE_DIR", pathlib.Path(__file__).parents[2]))


@pytest.fixture(scope="session")
def source_dir():
    return SOURCE_DIR


@pytest.fixture(scope="session")
def rt():
    return switchyard.Runtime(log_level="warn")


def fidelity_bound(reference):
    """The project's bound (tests/host/torchscript/test_zoo_parity.cpp): 1e-4 * max(1, max|ref|)."""
    return 1e-4 * max(1.0, reference.abs().max().item()) if reference.numel() else 0.0

"""Helpers shared by the test suites (``from tests.common import ...``)."""

from tests.common.tensors import assert_same, tensor_difference

__all__ = ["assert_same", "tensor_difference"]

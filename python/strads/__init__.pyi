"""Type stubs of strads."""

from strads import decomposition as decomposition
from strads import linear_model as linear_model
from strads.mf import MF as MF
from strads.topic import LDAModel as LDAModel

from strads._strads import EngineError as EngineError

__all__ = ["__version__", "EngineError", "decomposition", "linear_model", "LDAModel", "MF"]

__version__: str

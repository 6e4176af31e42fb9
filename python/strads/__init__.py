"""strads: scheduled model-parallel machine learning, from Python.

``strads.linear_model`` holds the Lasso, the elastic net and L1 logistic regression, their
cross-validated forms and paths, in scikit-learn's shape, fitted by strads' scheduled coordinate
descent (the Rust engine, without the interpreter's lock). ``strads.MF`` factorizes explicit
ratings and implicit feedback. ``strads.LDAModel`` (tomotopy's shape) and
``strads.decomposition.LatentDirichletAllocation`` (scikit-learn's) train topic models.

Bad data or settings raise ``ValueError`` with the Rust message; a failure of the engine itself
raises ``strads.EngineError``, a ``RuntimeError``.
"""

from strads._strads import EngineError, __version__
from strads import decomposition, linear_model
from strads.mf import MF
from strads.topic import LDAModel

__all__ = ["__version__", "EngineError", "decomposition", "linear_model", "LDAModel", "MF"]

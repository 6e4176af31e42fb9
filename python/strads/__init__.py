"""strads: scheduled model-parallel machine learning, from Python.

``strads.linear_model`` holds the Lasso, the elastic net and L1 logistic regression, their
cross-validated forms and paths, in scikit-learn's shape, fitted by strads' scheduled coordinate
descent (the Rust engine, without the interpreter's lock). ``strads.MF`` factorizes explicit
ratings and implicit feedback.
"""

from strads._strads import __version__
from strads import linear_model
from strads.mf import MF

__all__ = ["__version__", "linear_model", "MF"]

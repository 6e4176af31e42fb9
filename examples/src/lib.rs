//! Nothing to build here: the scheduled programs are the examples of this package.

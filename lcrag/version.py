"""The package version (one place; ``lcrag.__version__``, ``lcrag --version`` and run manifests read it)."""

__version__ = "0.1.0"

"""Nothing to import: this package exists so that pre-commit installs the mzk wheel."""

"""mzk: static analyzer, language server and local runner for Mozaiks workflow bundles.

The wheel installs the ``mzk`` program (on PATH in the environment it was
installed into). This package lets Python code and editors find it::

    import mzk
    subprocess.run([mzk.find_mzk_bin(), "check", "workflows"])

and ``python -m mzk ARGS`` runs it with the same arguments.
"""

from ._find import find_mzk_bin

__all__ = ["__version__", "find_mzk_bin"]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("mzk")
    except PackageNotFoundError:  # imported from a source tree, not installed
        return "unknown"


__version__ = _version()

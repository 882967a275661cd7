"""Where the ``mzk`` binary of this installation is."""

import os
import sys
import sysconfig
from pathlib import Path
from typing import Iterator

_EXE = "mzk.exe" if sys.platform == "win32" else "mzk"


def _is_program(path: Path) -> bool:
    return path.is_file() and (sys.platform == "win32" or os.access(path, os.X_OK))


def _recorded() -> Iterator[Path]:
    """The binary the installer recorded for this distribution (RECORD lists
    it relative to site-packages, e.g. ``../../../bin/mzk``): exact for
    environments, ``--user``, ``--prefix`` and ``--target`` installs alike."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        dist = distribution("mzk")
    except PackageNotFoundError:
        return
    for file in dist.files or ():
        if file.name == _EXE and file.parent.name in ("bin", "Scripts"):
            yield Path(dist.locate_file(file)).resolve()


def _user_scheme() -> str:
    if os.name == "nt":
        return "nt_user"
    if sys.platform == "darwin" and getattr(sys, "_framework", None):
        return "osx_framework_user"
    return "posix_user"


def _script_folders() -> Iterator[Path]:
    """The folders installers put programs in, for installs without a RECORD."""
    yield Path(sysconfig.get_path("scripts"))
    try:
        yield Path(sysconfig.get_path("scripts", scheme=_user_scheme()))
    except KeyError:
        pass
    # `pip install --target DIR` puts the package in DIR and programs in DIR/bin.
    yield Path(__file__).resolve().parent.parent / "bin"


def find_mzk_bin() -> str:
    """The path of the ``mzk`` binary installed with this package.

    Raises FileNotFoundError, naming the places looked at, when it is missing
    (for instance when the package is imported from a source checkout).
    """
    looked = []
    for candidate in _recorded():
        if _is_program(candidate):
            return os.fspath(candidate)
        looked.append(candidate)
    for folder in _script_folders():
        candidate = folder / _EXE
        if _is_program(candidate):
            return os.fspath(candidate)
        looked.append(candidate)
    raise FileNotFoundError(
        "the mzk binary of this installation was not found (looked at "
        + ", ".join(os.fspath(p) for p in looked)
        + "); reinstall it with `pip install --force-reinstall mzk`"
    )

"""``python -m mzk ARGS``: runs the mzk binary with ARGS.

On POSIX systems the Python process becomes mzk (``exec``): the same process,
standard streams, signals and exit status. Windows has no ``exec``: mzk runs
as a child that shares the console, so Ctrl+C reaches it directly, and its
exit status becomes this process's.
"""

import os
import sys

from ._find import find_mzk_bin


def main() -> None:
    try:
        binary = find_mzk_bin()
    except FileNotFoundError as error:
        print(f"mzk: {error}", file=sys.stderr)
        sys.exit(2)
    argv = [binary, *sys.argv[1:]]
    if sys.platform == "win32":
        import signal
        import subprocess

        # The console delivers Ctrl+C to both processes: mzk decides what it
        # means, this one only waits for mzk's exit status.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        sys.exit(subprocess.call(argv))
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(binary, argv)


if __name__ == "__main__":
    main()

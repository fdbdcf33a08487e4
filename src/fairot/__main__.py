"""``python -m fairot``: the same command line as the ``fairot`` console script."""

import sys

from fairot.cli import main

if __name__ == "__main__":
    sys.exit(main())

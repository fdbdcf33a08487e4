"""``python -m fairot``: the same command line as the ``fairot`` console script."""

import sys

from fairot.cli import main

sys.exit(main())

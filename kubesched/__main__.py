"""``python -m kubesched``: the same command line as the ``kubesched`` script."""

import sys

from kubesched.cli import main

sys.exit(main())

"""``python -m mixbayes``: the ``mixbayes`` command, where its script is not on PATH."""

import sys

from .cli import main

sys.exit(main())

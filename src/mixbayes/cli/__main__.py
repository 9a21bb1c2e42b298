"""``python -m mixbayes.cli``: the ``mixbayes`` command."""

import sys

from . import main

sys.exit(main())

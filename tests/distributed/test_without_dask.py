"""mixbayes works without dask: importing it loads none, and asking for dask says how to get it.

Runs whether or not dask is installed (one subprocess: this session has imported dask already).
"""

import subprocess
import sys

CHECK = """
import sys
import mixbayes
loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("dask", "distributed"))
assert not loaded, loaded
sys.modules["dask"] = None  # from here on, as if dask were not installed
try:
    mixbayes.distributed.read_docword("docword.any.txt")
except ImportError as exc:
    print(exc)
"""


def test_import_loads_no_dask_and_missing_dask_names_the_extra():
    result = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert 'install them with pip install "mixbayes[distributed]"' in result.stdout

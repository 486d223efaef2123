import os
import sys

# tests import their shared helpers as a plain module
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# the cache signs its entries with a key kept in the user's state folder: the tests keep theirs apart
if "XDG_STATE_HOME" not in os.environ:
    import tempfile

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="etrace-lint-test-state-")

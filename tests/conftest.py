import os
import sys

# tests import their shared helpers as a plain module
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

# the cache signs its entries with a key kept in the user's state folder: the tests keep theirs apart
if "XDG_STATE_HOME" not in os.environ:
    import tempfile

    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="etrace-lint-test-state-")


# --- fixtures for the whole session -------------------------------------------------------------

import pytest  # noqa: E402

SHARED_PROGRAMS = "JAX_COMPILATION_CACHE_DIR"


@pytest.fixture(scope="session", autouse=True)
def shared_compiled_programs(tmp_path_factory):
    """One folder of compiled XLA programs for every worker the session starts (command-line runs, the
    language server, pools in this process): a model linted again loads its small programs instead of
    compiling them. Workers honour a JAX_COMPILATION_CACHE_DIR they find, as they do a user's."""
    if SHARED_PROGRAMS in os.environ:  # the caller's own folder
        yield os.environ[SHARED_PROGRAMS]
        return
    with pytest.MonkeyPatch.context() as patch:
        folder = str(tmp_path_factory.mktemp("xla-programs"))
        patch.setenv(SHARED_PROGRAMS, folder)
        yield folder


@pytest.fixture(scope="module")
def own_compiled_programs():
    """For a module that checks where the workers keep their compiled programs: without the shared folder."""
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv(SHARED_PROGRAMS, raising=False)
        yield

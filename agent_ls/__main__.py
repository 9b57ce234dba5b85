"""``python -m agent_ls``: the same entry point as the ``agent-ls`` command."""

import sys

from agent_ls.cli import main

sys.exit(main())

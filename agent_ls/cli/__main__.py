"""``python -m agent_ls.cli``: the ``agent-ls`` command."""

import sys

from agent_ls.cli import main

sys.exit(main())

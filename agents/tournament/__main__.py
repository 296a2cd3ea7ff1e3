"""``python -m agents.tournament``: the same as ``mahjong-tournament``."""

import sys

from agents.tournament.cli import main

sys.exit(main())

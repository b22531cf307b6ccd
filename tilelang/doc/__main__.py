"""`python -m tilelang.doc [--write PATH]`: the language reference."""

import sys

from tilelang.doc import main

sys.exit(main())

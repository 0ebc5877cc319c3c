"""``python -m benchmarks.soak``."""

from benchmarks.soak.cli import main

raise SystemExit(main())

"""`python -m schedspec.conformance {serve,conform} ...` (before `schedspec` wires them in)."""

from .cli import main

raise SystemExit(main())

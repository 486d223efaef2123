import sys

from .serve import main

raise SystemExit(main(sys.argv[1:]))

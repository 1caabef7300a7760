"""`python -m lazyloop.bench`: run the benchmark command."""
import sys

from . import main

sys.exit(main())

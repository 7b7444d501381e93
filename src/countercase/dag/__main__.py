import sys

from countercase.dag.write import main

sys.exit(main())

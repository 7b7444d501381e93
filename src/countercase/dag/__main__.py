import sys

from countercase.errors import CountercaseError

try:
    from countercase.dag.write import main
except CountercaseError as error:  # stages.yaml names a path, group or key that does not exist
    sys.exit(f"error: {error}")

sys.exit(main())

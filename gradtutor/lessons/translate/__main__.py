"""`python -m gradtutor.lessons.translate skeleton|update|report LESSON LANGUAGE`: the author's
translation tools, the same commands as `gradtutor translate` (docs/translating.md)."""

import sys

from gradtutor.cli import main

if __name__ == "__main__":
    main(["translate", *sys.argv[1:]])

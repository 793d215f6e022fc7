"""`python -m gradtutor` runs the same CLI as the console script."""

from gradtutor.cli import main

if __name__ == "__main__":
    main()

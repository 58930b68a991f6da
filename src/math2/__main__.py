"""`python -m math2` runs the command line."""

from math2.cli import main

main()

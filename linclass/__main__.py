"""``python -m linclass``: the command-line tool (:mod:`linclass.cli`).

The guard keeps a plain ``import linclass.__main__`` from running the tool
on the host's ``sys.argv`` (and exiting the interpreter).
"""
import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())

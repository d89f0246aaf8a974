"""The ``linclass`` command (placeholder until the model families register)."""
import argparse
import sys


def main(argv=None):
    parser = argparse.ArgumentParser(prog="linclass")
    parser.add_argument("command", choices=["demo"])
    parser.parse_args(argv)
    print("linclass: demo not available yet")
    return 0

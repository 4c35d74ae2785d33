"""The seed's entry point: `python train.py [--task T] [--episodes N] [--model M] ...`."""

import sys

from fakegang.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))

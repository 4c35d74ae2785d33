"""`python train.py [options]` is `fakegang train [options]`: what `make run` runs."""

import sys

from fakegang.cli.main import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]], standalone=True))

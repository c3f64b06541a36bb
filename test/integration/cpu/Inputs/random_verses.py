"""Writes LINES lines of random words (3 to 60 each, from a dozen words of
the King James Bible's style) to standard output: verses for
--dataset kjv and kjv-text where `bible` is not installed (the device
machine). Seeded, so every run writes the same text.

Usage: random_verses.py LINES"""
import random
import sys

rng = random.Random(0)
words = ['alpha', 'beta', 'gamma', 'and', 'the', 'LORD', 'said', 'unto', 'him,', 'it', 'was', 'good.']
lines = int(sys.argv[1])
print('\n'.join(' '.join(rng.choice(words) for _ in range(rng.randint(3, 60))) for _ in range(lines)))

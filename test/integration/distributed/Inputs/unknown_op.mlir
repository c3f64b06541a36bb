// A model whose parse fails: an op of a dialect gacc does not load.
foo.bar

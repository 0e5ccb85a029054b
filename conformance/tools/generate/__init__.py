"""The committed suite's source: builders (one module per theme) draft vectors, the generator
replays each draft on the reference to fill in every expectation and writes the files
(``snapkv-conformance generate``). :mod:`.named` reads every committed vector's "Catches:" text
into the catalogued mistakes it names."""

"""What several test modules share: reference-made vectors, the small suite, the plain oracles,
summation helpers, the port differential harness and toolchain checks.

Import as ``from tests.support.<module> import ...``; nothing here ships with the kit.
"""

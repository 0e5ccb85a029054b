"""The one transport: starting, talking to and stopping adapters (see :mod:`.process`)."""

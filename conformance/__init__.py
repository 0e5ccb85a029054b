"""snapkv-conformance: the conformance kit for ports of the SnapKV KV-cache eviction policy."""

__version__ = "0.1.0"

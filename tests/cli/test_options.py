"""The options the commands share (:mod:`conformance.cli.commands._options`): a vector file
named twice is one vector, a copy of it a duplicate.
"""

from __future__ import annotations

import pytest

from conformance.cli.commands import _options
from tests.support.runner_support import plain_vector, write_suite


def test_a_file_named_twice_is_one_vector_but_a_copy_is_a_duplicate(tmp_path, suite_dir):
    one = suite_dir / "cli" / "a.json"
    vectors = _options.load_vectors([str(suite_dir), str(one), str(suite_dir)])
    assert [v.id for v in vectors] == ["cli/a", "cli/b"]
    copy = write_suite(tmp_path / "copy", [plain_vector("cli/a")])
    with pytest.raises(ValueError, match="duplicate id 'cli/a'"):
        _options.load_vectors([str(suite_dir), str(copy)])

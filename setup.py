"""Only to keep stale files out of wheels; everything else is in pyproject.toml.

setuptools copies the package into build/lib and never deletes what it copied before, so a
vector removed from the checkout would ride along in the next wheel built there (its run
would count one item more than the suite has). Each build starts from an empty copy.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py


class FreshBuildPy(build_py):
    def run(self) -> None:
        shutil.rmtree(Path(self.build_lib) / "conformance", ignore_errors=True)
        super().run()


setup(cmdclass={"build_py": FreshBuildPy})

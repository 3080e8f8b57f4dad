"""The README's Python examples (its ```python blocks) run without an error or a warning:
each in a fresh interpreter with warnings as errors, so that an example which makes the
package warn (a GateSeparationWarning, a DeprecationWarning) fails here instead of greeting
a reader."""
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

import moe

README = Path(__file__).resolve().parents[3] / "README.md"


def snippets():
    """(first line number, code) of every ```python block of README.md."""
    if not README.is_file():
        return []
    found = []
    lines = README.read_text(encoding="utf-8").splitlines()
    start = None
    for number, line in enumerate(lines, 1):
        if start is None and re.match(r"^```python\s*$", line):
            start = number
        elif start is not None and line.startswith("```"):
            found.append((start + 1, "\n".join(lines[start:number - 1]) + "\n"))
            start = None
    return found


def needs(code):
    """The optional modules a snippet imports that this python3 lacks."""
    missing = []
    for module in ("dask", "distributed", "pandas", "sklearn"):
        if re.search(rf"^\s*(import|from) {module}\b", code, re.M):
            try:
                __import__(module)
            except ImportError:
                missing.append(module)
    return missing


SNIPPETS = snippets()


def test_the_readme_has_python_examples():
    if not README.is_file():
        pytest.skip("not run from a libmoe source tree (no README.md above the package)")
    assert len(SNIPPETS) >= 2  # the package's example and moe.dask's


@pytest.mark.parametrize("line, code", SNIPPETS, ids=[f"README.md:{line}" for line, _ in SNIPPETS])
def test_readme_example_runs_without_warnings(line, code, tmp_path):
    missing = needs(code)
    if missing:
        pytest.skip(f"this python3 lacks {', '.join(missing)}")
    # Every warning is an error, except the DeprecationWarnings that Debian's distributed
    # (2022.12) raises under Python 3.11's tornado itself: not the package's, nothing an
    # example could avoid.
    prelude = ("import warnings\n"
               "warnings.simplefilter('error')\n"
               "warnings.filterwarnings('ignore', category=DeprecationWarning,\n"
               "                        module=r'(distributed|tornado)(\\.|$)')\n")
    script = tmp_path / "example.py"
    script.write_text(prelude + code, encoding="utf-8")
    # The package this test imports, whichever it is (the source tree's through a relative
    # PYTHONPATH, or an installed wheel): the example runs in another directory.
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(os.path.abspath(moe.__file__)))]
        + [path for path in env.get("PYTHONPATH", "").split(os.pathsep) if path])
    result = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=900, check=False)
    assert result.returncode == 0, (f"README.md line {line}: the example failed\n"
                                    f"{result.stdout}\n{result.stderr}")
    # Warnings of other processes (dask's workers) reach stderr only: none may be the
    # package's.
    ours = [text for text in result.stderr.splitlines()
            if "Warning" in text and re.search(r"\bmoe\b|libmoe", text)]
    assert not ours, f"README.md line {line}:\n{result.stderr}"

"""An unbuilt source tree explains itself instead of "cannot import name"."""
import pathlib
import shutil
import subprocess
import sys

import linclass


def test_unbuilt_core_says_how_to_build(tmp_path):
    src = pathlib.Path(linclass.__file__).resolve().parent
    shutil.copytree(src, tmp_path / "linclass",
                    ignore=shutil.ignore_patterns("*.so", "*.pyd", "*.c", "__pycache__"))
    code = ("import linclass\n"
            "try:\n"
            "    linclass.LinearSVC\n"
            "except ImportError as exc:\n"
            "    print(exc)\n")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "is not compiled" in out.stdout and "pip install" in out.stdout, out.stdout

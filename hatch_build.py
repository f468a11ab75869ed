"""The wheel's build hook: compile the per-line core with mypyc (``forensics.native``
lists the modules). Without a C compiler (or mypyc) the wheel is built pure
Python and says so; ``FORENSICS_PURE_PYTHON=1`` at build time builds it pure
on purpose. Editable installs stay pure: ``python -m forensics.compile build``
compiles a checkout in place."""
from __future__ import annotations

import os
import runpy
import shutil
import tempfile
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface


class CompiledCoreHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or version == "editable":
            # An editable install reads signatures/ from the checkout. A copy in site-packages
            # would be a bare forensics/ folder there: a namespace package that answers
            # "No module named 'forensics.cli'" whenever the checkout is not on the path.
            return
        root = Path(self.root)
        build_data["force_include"][str(root / "signatures")] = "forensics/_signatures"
        native = runpy.run_path(str(root / "forensics" / "native.py"))
        if native["pure_forced"]():
            self.app.display_info(f"forensics: {native['PURE_ENV']} set: a pure-Python wheel")
            return
        self._tmp = Path(tempfile.mkdtemp(prefix="forensics-wheel-"))
        lib = self._tmp / "lib"
        try:
            outputs = native["build_extensions"](root / "forensics", self._tmp / "temp", lib)
        except BaseException as e:  # no compiler, no headers, no mypyc: the pure modules run
            if isinstance(e, KeyboardInterrupt):
                raise
            self.app.display_warning(f"forensics: the compiled core was not built ({type(e).__name__}: "
                                     f"{str(e).strip().splitlines()[-1] if str(e).strip() else ''}); "
                                     f"the pure-Python modules will run, with the same answers")
            return
        for out in outputs:
            build_data["force_include"][str(out)] = out.relative_to(lib).as_posix()
        stamp = self._tmp / native["STAMP"]
        stamp.write_text(native["stamp_text"](root / "forensics"))
        build_data["force_include"][str(stamp)] = f"forensics/{native['STAMP']}"
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        self.app.display_info(f"forensics: compiled core built ({len(outputs)} extension files)")

    def finalize(self, version: str, build_data: dict[str, Any], artifact_path: str) -> None:
        tmp = getattr(self, "_tmp", None)
        if tmp is not None and not os.environ.get("FORENSICS_KEEP_BUILD"):
            shutil.rmtree(tmp, ignore_errors=True)

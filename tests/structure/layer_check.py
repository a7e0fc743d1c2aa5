#!/usr/bin/env python3
"""Fails on an include between product folders that docs/DESIGN.md section 2 does not draw.

The arrows are the folders' `#include "folder/..."` lines. LAYERS below is the picture of
DESIGN.md section 2 as data: a folder may include only the folders listed for it, every one of
them on a lower layer, so an arrow that is not listed (an upward one, or a new sideways one) fails
and no cycle can form. A new arrow is a design change: draw it in DESIGN.md and list it here.

Usage: layer_check.py SOURCE_DIR
"""

import os
import re
import sys

# folder: (layer, the folders it may include)
LAYERS = {
    "core": (0, set()),
    "elf": (0, set()),
    "x509": (0, set()),
    "state": (0, set()),
    "preload": (0, set()),
    "config": (1, {"core", "state"}),
    "fleet": (1, {"core", "state"}),
    "upstream": (1, {"core", "x509"}),
    "shim": (2, {"config", "core", "elf", "fleet", "state"}),
    "cli": (3, {"config", "core", "elf", "fleet", "preload", "upstream"}),
    "proxy": (3, {"config", "core", "preload", "shim", "state", "x509"}),
}
SOURCE_SUFFIXES = (".c", ".cpp", ".h")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z0-9_]+)/')


def arrows(source):
    """(from, to) -> the first 'file:line' that draws it."""
    out = {}
    for folder in LAYERS:
        for root, _, names in os.walk(os.path.join(source, folder)):
            for name in sorted(names):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(root, name)
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if m and m[1] != folder:
                            out.setdefault((folder, m[1]), "%s:%d" % (os.path.relpath(path, source), number))
    return out


def main():
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-1])
        return 2
    source = sys.argv[1]
    for folder, (layer, allowed) in LAYERS.items():
        for target in allowed:
            assert LAYERS[target][0] < layer, "LAYERS itself draws %s -> %s upward" % (folder, target)
    found = arrows(source)
    bad = []
    for (folder, target), where in sorted(found.items()):
        if target not in LAYERS:
            continue  # not a product folder ("tests/...", a system header in quotes)
        if target not in LAYERS[folder][1]:
            up = LAYERS[target][0] - LAYERS[folder][0]
            kind = "upward" if up > 0 else "sideways" if up == 0 else "undrawn"
            bad.append("%s arrow %s -> %s (%s)" % (kind, folder, target, where))
    unused = sorted((f, t) for f, (_, allowed) in LAYERS.items() for t in allowed if (f, t) not in found)
    for line in bad:
        print("layer_check: " + line)
    for folder, target in unused:
        print("layer_check: note: %s may include %s but does not" % (folder, target))
    print("layer_check: %d arrows between %d folders, %d not drawn in DESIGN.md section 2" %
          (len([a for a in found if a[1] in LAYERS]), len(LAYERS), len(bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

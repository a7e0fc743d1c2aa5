"""Every std::mutex the preload library declares is registered with the fork guard (issue 11 §6):
a lock that fork() does not take first can be inherited taken by the child, which then hangs on
it. Reads shim/*.cpp: each `std::mutex NAME` must be passed to guard_across_fork in that file."""

import re
import sys
from pathlib import Path

shim = Path(sys.argv[1])
missing = []
for path in sorted(shim.glob("*.cpp")):
    if path.name == "fork_guard.cpp":
        continue
    text = path.read_text()
    for match in re.finditer(r"std::mutex\s+(\w+)\s*[;{]", text):
        name = match.group(1)
        if not re.search(r"guard_across_fork\((\w+(->|\.))?" + re.escape(name) + r"\)", text):
            line = text.count("\n", 0, match.start()) + 1
            missing.append(f"{path.name}:{line}: std::mutex {name} is not registered with guard_across_fork")
print("\n".join(missing) if missing else "every lock is registered")
sys.exit(1 if missing else 0)

"""CPU seconds by part of a campaign (benchmarks/2026-11-26-scaleout.md).

    python benchmarks/2026-11-26-scaleout.py N W [BACKEND]

runs `check(BACKEND, max_examples=N, seed=0, shrink=False, workers=W)` and prints its wall
time, the load average, its root causes and the CPU seconds of the campaign's process
("parent"), of the Dask worker processes ("workers") and of the other descendants
("children": isolated backend processes). A second copy of this script (`--watch ROOT
OUT`), a separate process whose own CPU is not counted, reads /proc/PID/stat of every
descendant of ROOT every 50 ms.
"""
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time

TICK = os.sysconf("SC_CLK_TCK")


def _stat(pid):
    """(parent pid, CPU seconds) of a process, None when it is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            text = f.read()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2:].split()
    return int(fields[1]), (int(fields[11]) + int(fields[12])) / TICK


def watch(root: int, out: str) -> None:
    me, seen, parent = os.getpid(), {}, {}
    while True:
        done = os.path.exists(out + ".stop")
        for name in os.listdir("/proc"):
            if not name.isdigit() or int(name) in (root, me):
                continue
            st = _stat(int(name))
            if st and (int(name) in parent or st[0] == root or st[0] in parent):
                parent.setdefault(int(name), st[0])
                seen[int(name)] = max(seen.get(int(name), 0.0), st[1])
        if done:
            break
        time.sleep(0.05)
    with open(out, "w") as f:
        json.dump({"seen": seen, "parent": parent}, f)


def by_part(watched: dict) -> dict:
    root = os.getpid()
    seen = {int(k): v for k, v in watched["seen"].items()}
    parent = {int(k): v for k, v in watched["parent"].items()}
    parents = set(parent.values())
    parts = {"workers": 0.0, "children": 0.0}
    for pid, cpu in seen.items():
        part = "workers" if parent[pid] == root and pid in parents else "children"
        parts[part] += cpu
    own = os.times()
    parts["parent"] = own.user + own.system
    parts["total"] = sum(parts.values())
    return {k: round(v, 2) for k, v in parts.items()}


def main(n: int, workers: int, backend: str) -> None:
    out = tempfile.mktemp(prefix="lazyloop-watch-")
    watcher = subprocess.Popen([sys.executable, __file__, "--watch", str(os.getpid()), out])
    start = time.monotonic()
    from lazyloop.difftest import check
    report = check(backend, max_examples=n, seed=0, shrink=False, workers=workers)
    wall = time.monotonic() - start
    open(out + ".stop", "w").close()
    watcher.wait()
    with open(out) as f:
        watched = json.load(f)
    os.remove(out)
    os.remove(out + ".stop")
    watched["seen"].pop(str(watcher.pid), None)
    causes = sorted(str(d.root_cause) for d in report.disagreements)
    print(json.dumps(dict(programs=n, workers=workers, wall=round(wall, 2),
                          load=os.getloadavg()[0], root_causes=len(causes),
                          causes_hash=hashlib.sha1(repr(causes).encode()).hexdigest()[:8],
                          cpu=by_part(watched))))


if __name__ == "__main__":
    if sys.argv[1] == "--watch":
        watch(int(sys.argv[2]), sys.argv[3])
    else:
        main(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3] if len(sys.argv) > 3 else
             "onnxruntime")

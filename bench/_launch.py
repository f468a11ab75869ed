"""Tiny launcher: run ARGV, then write its wall time and rusage as JSON to RESULT.

    python bench/_launch.py RESULT ARGV...

Why a launcher: Linux reports a child's ``ru_maxrss`` as at least the resident
size of the process that forked it (the pre-exec copy counts), so measuring
small children straight from the harness would report the harness's own RSS.
This process imports almost nothing (~9 MiB, below any Python child's peak),
so the child's ``ru_maxrss`` from ``os.wait4`` is its own.
"""
import json
import os
import sys
import time

result, argv = sys.argv[1], sys.argv[2:]
t0 = time.perf_counter()
pid = os.posix_spawnp(argv[0], argv, os.environ)
_, status, ru = os.wait4(pid, 0)
wall = time.perf_counter() - t0
with open(result, "w") as f:
    json.dump({"wall_s": wall, "user_s": ru.ru_utime, "sys_s": ru.ru_stime, "max_rss_kib": ru.ru_maxrss,
               "rc": os.waitstatus_to_exitcode(status)}, f)
sys.exit(0)

"""Exit codes: one place, named (a contract: see README)."""
OK = 0  # no failure found / watch: server ready
FAILURE = 1  # a failure was diagnosed
USAGE = 2  # usage error or unreadable input
STALLED = 3  # watch: no progress for --stall-timeout
READY_TIMEOUT = 4  # watch: --ready-timeout passed without readiness
INTERRUPTED = 130  # Ctrl-C / SIGTERM

#!/usr/bin/env bash
# A deployment's start script (the kind a container entrypoint or a systemd unit runs): logs a line,
# runs the server command in the foreground, then reports its exit status. SERVER_CMD is the command.
echo "[start.sh] $(date -u '+%F %T') starting: ${SERVER_CMD}"
echo "[start.sh] CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-unset} HF_HOME=${HF_HOME:-unset}"
$SERVER_CMD
rc=$?
echo "[start.sh] $(date -u '+%F %T') server exited with status $rc"
exit $rc

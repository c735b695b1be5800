#!/bin/bash
# Captures, while a run goes, the engine's kill/die/start events and every
# matching node container's log (its peer-down-hint lines are not history
# records) into OUTDIR, for failover-parts.py (docs/performance.md,
# "Kill failover, part by part"). Stop it with a signal when the run ends.
# usage: failover-capture.sh OUTDIR CONTAINER-NAME-PATTERN
out=$1; pat=$2; mkdir -p $out
docker events --filter type=container --filter event=kill --filter event=die --filter event=start --format '{{.TimeNano}} {{.Action}} {{index .Actor.Attributes "name"}}' > $out/events.txt &
ev=$!
trap "kill $ev; kill \$(jobs -p) 2>/dev/null; exit" TERM INT
declare -A seen
while true; do
  for c in $(docker ps --filter "name=$pat" --format '{{.ID}}:{{.Names}}'); do
    id=${c%%:*}; nm=${c#*:}
    if [ -z "${seen[$id]}" ]; then seen[$id]=1; docker logs -f $id > $out/$nm-$id.log 2>&1 & fi
  done
  sleep 0.3
done

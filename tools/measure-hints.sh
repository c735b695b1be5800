#!/usr/bin/env bash
# Measures how long after a fault the surviving nodes of the compose cluster
# log their peer-down hint, the figures the simulator's hint model is
# calibrated on (docs/simulator.md, "Failure hints"). For each of N rounds it
# kills (or stops, or pauses) node 5, notes the wall time just before the
# docker command, reads nodes 1-4's "peer-down hint" lines about peer 5 and
# prints one delay per node and round in milliseconds, then brings node 5
# back and lets the cluster settle.
#
#   make images up && tools/measure-hints.sh kill 20 > kill.txt; make down
#
# Run it alone on the machine: it measures wall time.
set -euo pipefail
fault=${1:?usage: measure-hints.sh kill|stop|pause ROUNDS}
rounds=${2:-20}
victim=ringleader-node5
for r in $(seq "$rounds"); do
  since=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
  t0=$(date +%s.%N)
  case $fault in
    kill) docker kill "$victim" >/dev/null ;;
    stop) docker stop -t 10 "$victim" >/dev/null ;;
    pause) docker pause "$victim" >/dev/null ;;
    *) echo "unknown fault $fault (kill, stop or pause)" >&2; exit 2 ;;
  esac
  sleep 2.5
  for n in 1 2 3 4; do
    docker logs --since "$since" "ringleader-node$n" 2>&1 \
      | grep '"peer-down hint"' | grep '"peer":5' | head -1 \
      | python3 -c 'import sys,json,datetime,re
t0=float(sys.argv[1])
for l in sys.stdin:
    t=re.sub(r"(\.\d{6})\d+", r"\1", json.loads(l)["time"])
    d=datetime.datetime.fromisoformat(t.replace("Z","+00:00")).timestamp()
    print("%s round %s node %s %.1f" % (sys.argv[2], sys.argv[3], sys.argv[4], (d-t0)*1000))' "$t0" "$fault" "$r" "$n"
  done
  case $fault in
    pause) docker unpause "$victim" >/dev/null ;;
    *) docker start "$victim" >/dev/null ;;
  esac
  sleep 3
done

#!/usr/bin/env bash
# Measures how long after a fault the nodes of the compose cluster log their
# peer-down hints, the figures the simulator's hint model is calibrated on
# (docs/simulator.md, "Failure hints"). For each of N rounds it faults node 5,
# notes the wall time just before (and, for a cut, just after) the fault's
# command, reads the "peer-down hint" lines and prints one delay per hint in
# milliseconds, then brings node 5 back and lets the cluster settle.
#
#   kill   docker kill node 5; prints "kill round R node N MS" for each of
#          nodes 1-4's first hint about 5, MS after the command started
#   stop   the same after docker stop (SIGTERM, graceful)
#   pause  docker pause node 5 for 2.5 s: "pause round R node N MS" as for
#          kill; then, after docker unpause, "pause-thawed round R about P MS"
#          for each hint node 5 itself logs within 2 s of the unpause command
#          (MS after it), about peer P
#   cut    cuts node 5 off both ways as the docker backend's partition does:
#          the project's netfilter helper (`ringleader netfilter apply`,
#          nftables drop rules) run in node 5's network namespace; "cut round R
#          node N MS" for nodes 1-4's hints about 5 and "cut-isolated round R
#          about P MS" for node 5's own, MS after the helper returned (the
#          rules were in place by then; "helper MS" says how long it took)
#
#   make images up && tools/measure-hints.sh kill 20 > kill.txt; make down
#
# Run it alone on the machine (flock /tmp/ringleader-docker.lock ...): it
# measures wall time.
set -euo pipefail
fault=${1:?usage: measure-hints.sh kill|stop|pause|cut ROUNDS}
rounds=${2:-20}
victim=ringleader-node5
image=${IMAGE:-ringleader-node:dev}

# hints CONTAINER SINCE T0 LABEL ROUND PEER-FIELD-FILTER...: prints the delay
# from T0 (seconds since the epoch) to the first hint about each peer that
# CONTAINER logged since SINCE, within 3 s of T0.
hints() {
  local c=$1 since=$2 t0=$3 label=$4 round=$5 who=$6
  docker logs --since "$since" "$c" 2>&1 | grep '"peer-down hint"' |
    python3 -c 'import sys,json,datetime,re
t0=float(sys.argv[1]); label,rnd,who=sys.argv[2:5]
seen=set()
for l in sys.stdin:
    r=json.loads(l)
    if who!="any" and r["peer"]!=int(who): continue
    if r["peer"] in seen: continue
    seen.add(r["peer"])
    t=re.sub(r"(\.\d{6})\d+", r"\1", r["time"])
    d=(datetime.datetime.fromisoformat(t.replace("Z","+00:00")).timestamp()-t0)*1000
    if d>3000: continue
    if who=="any": print("%s round %s about %d %.1f" % (label, rnd, r["peer"], d))
    else: print("%s round %s node %s %.1f" % (label, rnd, sys.argv[5], d))' "$t0" "$label" "$round" "$who" "${c#ringleader-node}"
}

peers_ips() {
  local ips=()
  for n in 1 2 3 4; do
    ips+=("$(docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "ringleader-node$n")")
  done
  local IFS=,
  echo "${ips[*]}"
}

helper() {
  docker run --rm --user 0 --network "container:$victim" --cap-add NET_ADMIN \
    --label org.ringleader.project=ringleader --entrypoint /ringleader "$image" netfilter "$@" >/dev/null
}

for r in $(seq "$rounds"); do
  since=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
  t0=$(date +%s.%N)
  case $fault in
    kill) docker kill "$victim" >/dev/null ;;
    stop) docker stop -t 10 "$victim" >/dev/null ;;
    pause) docker pause "$victim" >/dev/null ;;
    cut)
      ips=$(peers_ips)
      t0=$(date +%s.%N)
      helper apply --drop-out "$ips" --drop-in "$ips"
      t1=$(date +%s.%N)
      python3 -c 'import sys; print("helper round %s %.1f" % (sys.argv[3], (float(sys.argv[2])-float(sys.argv[1]))*1000))' "$t0" "$t1" "$r"
      t0=$t1
      ;;
    *) echo "unknown fault $fault (kill, stop, pause or cut)" >&2; exit 2 ;;
  esac
  sleep 2.5
  for n in 1 2 3 4; do
    hints "ringleader-node$n" "$since" "$t0" "$fault" "$r" 5
  done
  case $fault in
    pause)
      since=$(date -u +%Y-%m-%dT%H:%M:%S.%NZ)
      t0=$(date +%s.%N)
      docker unpause "$victim" >/dev/null
      sleep 2
      hints "$victim" "$since" "$t0" pause-thawed "$r" any
      ;;
    cut)
      hints "$victim" "$since" "$t0" cut-isolated "$r" any
      helper heal
      ;;
    *) docker start "$victim" >/dev/null ;;
  esac
  sleep 3
done

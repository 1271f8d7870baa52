#!/bin/bash
# run.sh with a contention record: the 1-minute load guard cannot see a
# second benchmark of two threads (another engineer's, load ~2), so while
# each run goes, every second a snapshot of the processes in state R that
# are not this run (nor ps) is taken, thread by thread; log2.txt records, per run, the
# number of snapshots and of those that saw another running process
# ("busy N/M"), summary.py leaves out runs with busy > 10 %. Before a run
# starts it also waits until a snapshot shows no other running process.
# Same binaries, models and command as run.sh; files {b}-{T}-{N}.json with
# N from ROUND (default 5) to ROUNDS. With NOWAIT=1 runs start at once
# (another engineer's benchmarks ran back to back from 06:54 on, so no
# quiet moment came): the contention is only recorded.
R=bench/results/2026-12-01-cpuq6
STOP=${STOP:-07:35}
ROUNDS=${ROUNDS:-12}
round=${ROUND:-5}
others() { ps -eLo pid=,stat=,comm= | awk -v me="$1" '$2 ~ /^R/ && $1 != me && $3 != "ps" && $3 != "awk" {n++} END {print n+0}'; }
waitquiet() {
  [[ -n "$NOWAIT" ]] && return
  while awk '{exit !($1 > 2.5)}' /proc/loadavg || [[ $(others 0) -gt 0 ]]; do sleep 3; done
}
while [[ $round -le $ROUNDS && "$(date +%H:%M)" < "$STOP" ]]; do
  order="q6base q6head"
  if (( round % 2 == 0 )); then order="q6head q6base"; fi
  for t in Q4_K_M Q4_K Q4_0; do
    for b in $order; do
      waitquiet
      start="$(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)"
      bench/tmp/minfer-$b bench -m bench/tmp/1b-$t.gguf -p 128 -n 64 -t 2 -r 3 --json > $R/$b-$t-$round.json 2>>$R/log2.txt &
      pid=$!
      snaps=0; busy=0
      while kill -0 $pid 2>/dev/null; do
        sleep 1
        snaps=$((snaps+1))
        if [[ $(others $pid) -gt 0 ]]; then busy=$((busy+1)); fi
      done
      wait $pid
      echo "== $b $t round $round $start busy $busy/$snaps" >> $R/log2.txt
    done
  done
  round=$((round+1))
done
echo "== done $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $R/log2.txt

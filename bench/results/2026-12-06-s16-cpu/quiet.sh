# quiet.sh: wait (at most 180 s) until the other processes of this shared
# 2-vCPU machine use under 25 % of one CPU over a one-second sample, so an
# A/B round does not overlap another engineer's benchmark; prints "(busy)"
# when it gave up waiting.
i=0
while [ $i -lt 180 ]; do
	busy=$(top -bn2 -d1 | awk '/^top -/{n++} n==2 && $1 ~ /^[0-9]+$/ {s+=$9} END{print int(s)}')
	[ "$busy" -lt 25 ] && exit 0
	sleep 1; i=$((i+2))
done
printf "(busy) "

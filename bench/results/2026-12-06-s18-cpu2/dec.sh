# usage: dec.sh MODEL ROUNDS NAME1 NAME2 ...: s16-s18 dec.sh with binaries /tmp/cpu18b/minfer-NAME:
# 256 decode tokens after a one-token prompt, two threads, the binaries in turn each round, each
# run started once quiet.sh finds the machine quiet (up to five tries, else "(busy)"); prints
# tok/s, the roofline fraction, the meter's mean and samples (GB/s), the 1-minute load before.
D=$(dirname $0)
M=$1; R=$2; shift 2
for r in $(seq $R); do for b in "$@"; do
	q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh); w=0
	while [ -n "$q" ] && [ $w -lt 4 ]; do q=$(sh $D/../2026-12-06-s15-cpu/quiet.sh); w=$((w+1)); done
	printf "%s%s r%d %s load %s " "$q" "$b" $r "$(date +%T)" "$(cut -d' ' -f1 /proc/loadavg)"
	/tmp/cpu18b/minfer-$b bench -m $M -p 1 -n 256 -t 2 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('%.2f tok/s roofline %.3f mem %.1f samples %s'%(d['decode_tok_s'], d.get('decode_fraction_of_memory_bandwidth',0), d.get('measured_memory_gb_s',0), ' '.join('%.1f'%x for x in d.get('measured_memory_gb_s_samples',[]))))"
done; done

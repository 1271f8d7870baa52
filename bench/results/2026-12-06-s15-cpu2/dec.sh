# usage: dec.sh MODEL ROUNDS bin1 bin2 ...: s12's dec.sh (256 decode tokens, two threads,
# alternating rounds), each run started once the machine is quiet (quiet.sh)
D=$(dirname $0)
M=$1; R=$2; shift 2
for r in $(seq $R); do for b in "$@"; do sh $D/../2026-12-06-s15-cpu/quiet.sh; printf "%s r%d " $b $r; /tmp/minfer-$b bench -m $M -p 1 -n 256 -t 2 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('%.2f tok/s roofline %.3f mem %.1f'%(d['decode_tok_s'], d.get('decode_fraction_of_memory_bandwidth',0), d.get('measured_memory_gb_s',0)))"; done; done

M=$1; R=$2
for r in $(seq $R); do for v in 16 32 64; do sh /tmp/qb/quiet.sh; printf "du=%s r%d " $v $r; MINFER_DU=$v /tmp/minfer-du bench -m $M -p 1 -n 256 -t 2 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('%.2f tok/s roofline %.3f mem %.1f'%(d['decode_tok_s'], d.get('decode_fraction_of_memory_bandwidth',0), d.get('measured_memory_gb_s',0)))"; done; done

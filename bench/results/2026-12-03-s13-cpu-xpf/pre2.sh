M=$1; R=$2
for r in $(seq $R); do for v in 1 0; do sh /tmp/qb/quiet.sh; printf "xpf=%s r%d " $v $r; MINFER_XPF=$v /tmp/minfer-xpf bench -m $M -p 128 -n 1 -t 2 -r 3 --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('prefill %.2f tok/s'%(d['prefill_tok_s']))"; done; done

# usage: [PR=runs] pre.sh MODEL ROUNDS bin1 bin2 ...  (PR runs a round, mean printed; prefill of PP tokens (default 128) and one decode token: bench refuses -n 0; two threads, alternating rounds, each run started once the machine is quiet: quiet.sh)
M=$1; R=$2; shift 2
D=$(dirname $0)
for r in $(seq $R); do for b in "$@"; do sh $D/quiet.sh; printf "%s r%d " $b $r; /tmp/minfer-$b bench -m $M -p ${PP:-128} -n 1 -t 2 -r ${PR:-1} --json 2>/dev/null | python3 -c "import json,sys; d=json.load(sys.stdin); print('prefill %.2f tok/s'%(d['prefill_tok_s']))"; done; done

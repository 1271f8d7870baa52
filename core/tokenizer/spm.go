package tokenizer

// symbol is a run of text [start, start+n) in a doubly linked list of the
// current segmentation; n == 0 marks a symbol merged into its left neighbour.
type symbol struct {
	start, n   int
	prev, next int
}

// splitChars makes one symbol per UTF-8 sequence, sized by its lead byte
// alone (llama.cpp does not validate here; a truncated tail is cut short).
func splitChars(text string, syms []symbol) []symbol {
	syms = syms[:0]
	for off := 0; off < len(text); {
		n := min(utf8SeqLen(text[off]), len(text)-off)
		i := len(syms)
		next := i + 1
		if off+n == len(text) {
			next = -1
		}
		syms = append(syms, symbol{start: off, n: n, prev: i - 1, next: next})
		off += n
	}
	return syms
}

// spmBigram is a candidate merge of two adjacent symbols whose joined text
// is a token.
type spmBigram struct {
	left, right int
	score       float32
	size        int
}

// spmFirst orders the queue: highest score first, then the leftmost pair.
func spmFirst(a, b spmBigram) bool {
	if a.score != b.score {
		return a.score > b.score
	}
	return a.left < b.left
}

// encodeSPM is llm_tokenizer_spm: start from single characters and keep
// merging the adjacent pair whose concatenation is the highest-scoring
// token. Characters left unmerged that are not tokens fall back to <0xNN>
// byte tokens, or UNK when the vocabulary has none.
func (t *Tokenizer) encodeSPM(text string, out []int32) []int32 {
	syms := splitChars(text, nil)
	q := minHeap[spmBigram]{items: make([]spmBigram, 0, len(syms)), less: spmFirst}
	tryAdd := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		s := text[syms[left].start : syms[right].start+syms[right].n]
		id, ok := t.ids[s]
		if !ok {
			return
		}
		q.push(spmBigram{left: left, right: right, score: t.scores[id], size: len(s)})
	}
	for i := 1; i < len(syms); i++ {
		tryAdd(i-1, i)
	}
	for q.len() > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		// Stale candidate: one side was merged away or grew since.
		if l.n == 0 || r.n == 0 || l.n+r.n != b.size {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		tryAdd(l.prev, b.left)
		tryAdd(b.left, l.next)
	}
	for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
		s := text[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.ids[s]; ok {
			out = append(out, id)
			continue
		}
		// Every merged symbol is a token, so only single characters get
		// here (llama.cpp's rev_merge resegmentation never triggers).
		for j := 0; j < len(s); j++ {
			if id := t.byteToken(s[j]); id != NoToken {
				out = append(out, id)
			}
		}
	}
	return out
}

const hexDigits = "0123456789ABCDEF"

// byteToken is llama_vocab::byte_to_token for SPM: "<0xNN>", else the byte
// itself as a token, else UNK (where llama.cpp would throw).
func (t *Tokenizer) byteToken(b byte) int32 {
	name := [6]byte{'<', '0', 'x', hexDigits[b>>4], hexDigits[b&15], '>'}
	if id, ok := t.ids[string(name[:])]; ok {
		return id
	}
	if id, ok := t.ids[string([]byte{b})]; ok {
		return id
	}
	return t.unk
}

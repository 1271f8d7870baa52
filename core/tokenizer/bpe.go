package tokenizer

// bpeBigram is a candidate merge of two adjacent symbols; leftN and rightN
// are their sizes when queued, so a candidate whose sides changed since is
// recognized as stale.
type bpeBigram struct {
	left, right   int
	rank          int32
	leftN, rightN int
}

// bpeFirst orders the queue: lowest merge rank first, then the leftmost.
func bpeFirst(a, b bpeBigram) bool {
	if a.rank != b.rank {
		return a.rank < b.rank
	}
	return a.left < b.left
}

// bpeScratch is per-call working memory, reused across the words of one
// Encode.
type bpeScratch struct {
	word []byte
	key  []byte
	syms []symbol
	q    minHeap[bpeBigram]
}

// encodeBPE is llm_tokenizer_bpe_session::tokenize for one text fragment:
// pre-tokenize into words, map each word's bytes to GPT-2's printable
// codepoints, then apply merges in rank order.
func (t *Tokenizer) encodeBPE(text string, out []int32) ([]int32, error) {
	cpts := codepoints(text)
	words, err := t.split.split(cpts)
	if err != nil {
		return nil, err
	}
	sc := &bpeScratch{q: minHeap[bpeBigram]{less: bpeFirst}}
	var raw []byte
	for _, w := range words {
		raw = raw[:0]
		for _, c := range cpts[w.start:w.end] {
			raw = appendCpt(raw, c)
		}
		sc.word = sc.word[:0]
		for _, b := range raw {
			sc.word = append(sc.word, byteToUTF8[b]...)
		}
		out = t.bpeWord(string(sc.word), sc, out)
	}
	return out, nil
}

// rank looks up the merge of two adjacent symbol texts, or -1.
func (t *Tokenizer) rank(sc *bpeScratch, left, right string) int32 {
	sc.key = append(append(append(sc.key[:0], left...), ' '), right...)
	if r, ok := t.merges[string(sc.key)]; ok {
		return r
	}
	return -1
}

func (t *Tokenizer) bpeWord(word string, sc *bpeScratch, out []int32) []int32 {
	if t.ignoreMerges {
		if id, ok := t.ids[word]; ok {
			return append(out, id)
		}
	}
	syms := splitChars(word, sc.syms)
	sc.syms = syms
	q := &sc.q
	q.items = q.items[:0]
	addBigram := func(left, right int) {
		if left < 0 || right < 0 {
			return
		}
		l, r := syms[left], syms[right]
		rk := t.rank(sc, word[l.start:l.start+l.n], word[r.start:r.start+r.n])
		if rk < 0 {
			return
		}
		q.push(bpeBigram{left: left, right: right, rank: rk, leftN: l.n, rightN: r.n})
	}
	for i := 1; i < len(syms); i++ {
		addBigram(i-1, i)
	}
	for q.len() > 0 {
		b := q.pop()
		l, r := &syms[b.left], &syms[b.right]
		if l.n == 0 || r.n == 0 || l.n != b.leftN || r.n != b.rightN {
			continue
		}
		l.n += r.n
		r.n = 0
		l.next = r.next
		if r.next >= 0 {
			syms[r.next].prev = b.left
		}
		addBigram(l.prev, b.left)
		addBigram(b.left, l.next)
	}
	for i := 0; i >= 0 && i < len(syms); i = syms[i].next {
		s := word[syms[i].start : syms[i].start+syms[i].n]
		if id, ok := t.ids[s]; ok {
			out = append(out, id)
			continue
		}
		// llama.cpp then looks up each byte of the (encoded) text as a
		// one-byte token and drops those it cannot find.
		for j := 0; j < len(s); j++ {
			if id, ok := t.ids[s[j:j+1]]; ok {
				out = append(out, id)
			}
		}
	}
	return out
}

package core

import (
	"fmt"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/tokenizer"
	"github.com/minfer/minfer/gguf"
)

// Tokenizer reads the model's tokenizer from its metadata.
func (s *Session) Tokenizer() (*tokenizer.Tokenizer, error) {
	if s.tok == nil && s.Info.tok != nil {
		s.tok = s.Info.tok // read and checked by Inspect
	}
	if s.tok == nil {
		t, err := readTokenizer(&s.file.Meta, s.H.NVocab)
		if err != nil {
			return nil, err
		}
		s.tok = t
	}
	return s.tok, nil
}

// readTokenizer reads the tokenizer from the metadata and checks its size
// against the embedding's nVocab rows (ErrVocabMismatch).
func readTokenizer(m *gguf.Metadata, nVocab int) (*tokenizer.Tokenizer, error) {
	t, err := tokenizer.FromGGUF(m)
	if err != nil {
		return nil, err
	}
	if t.VocabSize() != nVocab {
		return nil, fmt.Errorf("%w: tokenizer has %d tokens, the model's embedding %d", ErrVocabMismatch, t.VocabSize(), nVocab)
	}
	return t, nil
}

// Conversation opens a chat on the session: the model's tokenizer and its
// chat template (or a recognised built-in, or none for plain completion).
func (s *Session) Conversation() (*chat.Conversation, chat.Source, error) {
	tok, err := s.Tokenizer()
	if err != nil {
		return nil, chat.Source{}, err
	}
	tmpl, src := TemplateFor(&s.file.Meta, tok)
	return chat.NewConversation(s, tok, tmpl), src, nil
}

// TemplateFor picks the chat template from the metadata.
func TemplateFor(m *gguf.Metadata, tok *tokenizer.Tokenizer) (*chat.Template, chat.Source) {
	src, _ := m.String("tokenizer.chat_template")
	arch, _ := m.String("general.architecture")
	name, _ := m.String("general.name")
	text := func(id int32) string {
		if id < 0 || int(id) >= tok.VocabSize() {
			return ""
		}
		return tok.TokenText(id)
	}
	return chat.ForModel(src, arch+" "+name, text(tok.BOS()), text(tok.EOS()))
}

// LoadTokenizer reads only the tokenizer of a GGUF file (model or vocab).
func LoadTokenizer(path string) (*tokenizer.Tokenizer, error) {
	f, err := gguf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return tokenizer.FromGGUF(&f.Meta)
}

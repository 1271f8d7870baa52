// Package coretest holds test helpers shared by core, the CLI and the
// window's tests: copies of test models with edits.
package coretest

import (
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/gguf"
)

// Rewrite copies the model at src into a temporary folder through the GGUF
// writer, letting edit change metadata and tensors on the way, and returns
// the copy's path.
func Rewrite(t testing.TB, src string, edit func(f *gguf.File, b *gguf.Builder) error) string {
	t.Helper()
	f, err := gguf.Open(src)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close() // after WriteFile: the builder holds views of the mapping
	b, err := gguf.BuilderFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	if err := edit(f, b); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), filepath.Base(src))
	if err := b.WriteFile(out); err != nil {
		t.Fatal(err)
	}
	return out
}

// WithChatML copies a model and gives it the built-in chatml template as
// its own tokenizer.chat_template (none of the test models has one).
func WithChatML(t testing.TB, src string) string {
	t.Helper()
	chatml, err := chat.Builtin(chat.FamilyChatML, "", "")
	if err != nil {
		t.Fatal(err)
	}
	return Rewrite(t, src, func(_ *gguf.File, b *gguf.Builder) error {
		return b.Set("tokenizer.chat_template", gguf.Value{Type: gguf.ValString, V: chatml.Source()})
	})
}

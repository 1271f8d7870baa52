package app

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/minfer/minfer/core/chat"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"
)

// ChatMessage is one turn as kept on disk and shown in the list.
type ChatMessage struct {
	Role    string `json:"role"` // "user", "assistant", or "tool" (a tool's result)
	Content string `json:"content"`
	// ToolCalls are the calls an assistant turn made (OpenAI shape); a
	// "tool" turn names the call it answers by ToolCallID and Name.
	ToolCalls  []chat.ToolCall `json:"tool_calls,omitempty"`
	ToolCallID string          `json:"tool_call_id,omitempty"`
	Name       string          `json:"name,omitempty"`
	// Note is shown under an assistant reply: why it stopped early or
	// what went wrong. It is not part of what the model sees.
	Note  string      `json:"note,omitempty"`
	Stats *ReplyStats `json:"stats,omitempty"`
}

// ReplyStats are the numbers of one reply, kept with it.
type ReplyStats struct {
	PromptTokens  int     `json:"prompt_tokens"`
	ReusedTokens  int     `json:"reused_tokens"`
	PrefillTokens int     `json:"prefill_tokens"`
	Generated     int     `json:"generated"`
	GenRate       float64 `json:"gen_tokens_per_s"`
	PrefillRate   float64 `json:"prefill_tokens_per_s"`
	StopReason    string  `json:"stop_reason"`
	Dropped       int     `json:"dropped_messages,omitempty"`
	CtxUsed       int     `json:"ctx_used"`
	CtxLen        int     `json:"ctx_len"`
	// Where says where the blocks ran ("22/22 blocks on CUDA NVIDIA H200");
	// empty for a server's reply.
	Where string `json:"where,omitempty"`
}

// Chat is one conversation file.
type Chat struct {
	ID       string        `json:"id"`
	Title    string        `json:"title"`
	System   string        `json:"system,omitempty"`
	Model    string        `json:"model,omitempty"` // the model file it was last used with
	Created  time.Time     `json:"created"`
	Updated  time.Time     `json:"updated"`
	Messages []ChatMessage `json:"messages"`
}

// ChatSummary is what the sidebar lists.
type ChatSummary struct {
	ID      string
	Title   string
	Updated time.Time
}

// DamagedFile is a conversation file that could not be read and was moved
// aside so it is not lost and not read again.
type DamagedFile struct {
	Path    string // where it is now
	Problem string
}

// ChatStore keeps conversations as JSON files in one folder
// (<config>/minfer/chats).
type ChatStore struct {
	Dir string
	now func() time.Time
}

// NewChatStore opens (and creates) the folder.
func NewChatStore(dir string) (*ChatStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("chats: %w", err)
	}
	return &ChatStore{Dir: dir, now: time.Now}, nil
}

// ErrBadChatID is returned for ids that could escape the folder.
var ErrBadChatID = errors.New("chats: bad conversation id")

func (s *ChatStore) path(id string) (string, error) {
	if id == "" || strings.ContainsAny(id, `/\.`) {
		return "", fmt.Errorf("%w %q", ErrBadChatID, id)
	}
	return filepath.Join(s.Dir, id+".json"), nil
}

// NewChatID is time-ordered with a random tail, so two windows never clash.
func NewChatID(now time.Time) string {
	var r [3]byte
	_, _ = rand.Read(r[:])
	return now.UTC().Format("20060102-150405") + "-" + hex.EncodeToString(r[:])
}

// List reads every conversation, newest first. Files that do not parse are
// moved to <name>.damaged-<time> and returned, so the caller can say so.
func (s *ChatStore) List() ([]ChatSummary, []DamagedFile, error) {
	names, err := filepath.Glob(filepath.Join(s.Dir, "*.json"))
	if err != nil {
		return nil, nil, err
	}
	var out []ChatSummary
	var damaged []DamagedFile
	for _, p := range names {
		c, err := readChat(p)
		if err != nil {
			d, moveErr := s.setAside(p, err)
			if moveErr != nil {
				return out, damaged, moveErr
			}
			damaged = append(damaged, d)
			continue
		}
		out = append(out, ChatSummary{ID: c.ID, Title: c.Title, Updated: c.Updated})
	}
	sort.Slice(out, func(i, j int) bool {
		if !out[i].Updated.Equal(out[j].Updated) {
			return out[i].Updated.After(out[j].Updated)
		}
		return out[i].ID > out[j].ID
	})
	return out, damaged, nil
}

// Load reads one conversation. A damaged file is set aside and reported
// as *DamagedChatError.
func (s *ChatStore) Load(id string) (*Chat, error) {
	p, err := s.path(id)
	if err != nil {
		return nil, err
	}
	c, err := readChat(p)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return nil, err
		}
		d, moveErr := s.setAside(p, err)
		if moveErr != nil {
			return nil, moveErr
		}
		return nil, &DamagedChatError{File: d}
	}
	return c, nil
}

// DamagedChatError says a conversation could not be read and where it went.
type DamagedChatError struct{ File DamagedFile }

func (e *DamagedChatError) Error() string {
	return fmt.Sprintf("chats: %s; the file was moved to %s", e.File.Problem, e.File.Path)
}

func readChat(path string) (*Chat, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var c Chat
	if err := json.Unmarshal(b, &c); err != nil {
		return nil, fmt.Errorf("%s is not a conversation: %w", filepath.Base(path), err)
	}
	want := strings.TrimSuffix(filepath.Base(path), ".json")
	if c.ID != want {
		return nil, fmt.Errorf("%s holds conversation id %q, want %q", filepath.Base(path), c.ID, want)
	}
	for i, m := range c.Messages {
		if m.Role != "user" && m.Role != "assistant" && m.Role != "tool" {
			return nil, fmt.Errorf("%s: message %d has role %q, want user, assistant or tool", filepath.Base(path), i, m.Role)
		}
	}
	return &c, nil
}

func (s *ChatStore) setAside(path string, why error) (DamagedFile, error) {
	dst := fmt.Sprintf("%s.damaged-%s", path, s.now().UTC().Format("20060102-150405.000"))
	if err := os.Rename(path, dst); err != nil {
		return DamagedFile{}, fmt.Errorf("chats: %s is damaged (%v) and could not be moved aside: %w", path, why, err)
	}
	return DamagedFile{Path: dst, Problem: why.Error()}, nil
}

// Save writes c atomically (see writeFileAtomic).
func (s *ChatStore) Save(c *Chat) error {
	p, err := s.path(c.ID)
	if err != nil {
		return err
	}
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return fmt.Errorf("chats: encoding %s: %w", c.ID, err)
	}
	if err := writeFileAtomic(p, b); err != nil {
		return fmt.Errorf("chats: %w", err)
	}
	return nil
}

// writeFileAtomic writes a temporary file in the same folder, syncs it,
// then renames it over path, so a crash leaves the old or the new file and
// never half of one.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return err
	}
	_, werr := tmp.Write(data)
	serr := tmp.Sync()
	cerr := tmp.Close()
	if err := errors.Join(werr, serr, cerr); err != nil {
		os.Remove(tmp.Name())
		return fmt.Errorf("writing %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	return nil
}

// Delete removes a conversation file.
func (s *ChatStore) Delete(id string) error {
	p, err := s.path(id)
	if err != nil {
		return err
	}
	return os.Remove(p)
}

// chatTitle is the sidebar name: the first user message, shortened.
func chatTitle(msgs []ChatMessage) string {
	for _, m := range msgs {
		if m.Role == "user" {
			t := strings.Join(strings.Fields(m.Content), " ")
			if r := []rune(t); len(r) > 40 {
				t = string(r[:39]) + "…"
			}
			if t != "" {
				return t
			}
		}
	}
	return "New chat"
}

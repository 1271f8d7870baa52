package app

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// crashChildEnv makes the test binary a child that saves one conversation
// in a loop until it is killed (see TestChatStoreSurvivesACrashMidSave).
const crashChildEnv = "MINFER_TEST_SAVE_CHILD"

// crashChat is version v of the conversation the child saves: big enough
// (about 200 KiB) that a kill often lands inside a write.
func crashChat(v int) *Chat {
	c := &Chat{ID: "20250101-000000-c0ffee", Title: fmt.Sprintf("version %d", v)}
	body := strings.Repeat(fmt.Sprintf("v%d ", v), 25000)
	for i := 0; i < 2; i++ {
		c.Messages = append(c.Messages, ChatMessage{Role: "user", Content: body}, ChatMessage{Role: "assistant", Content: body})
	}
	return c
}

// TestChatStoreSaveChild is the child's body; it does nothing in a normal
// run.
func TestChatStoreSaveChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("the child of TestChatStoreSurvivesACrashMidSave")
	}
	s, err := NewChatStore(dir)
	if err != nil {
		fmt.Println("error:", err)
		os.Exit(1)
	}
	fmt.Println("saving")
	for v := 1; ; v++ {
		if err := s.Save(crashChat(v)); err != nil {
			fmt.Println("error:", err)
			os.Exit(1)
		}
		if v == 1 {
			fmt.Println("saved")
		}
	}
}

// TestChatStoreSurvivesACrashMidSave kills (SIGKILL) a process that is
// saving a conversation over and over, at a random moment after its first
// save (within two save times), 1000 times
// (100 with -short), four children at a time in four folders: every time,
// the file reads back whole as one of the versions, and nothing is
// reported damaged.
func TestChatStoreSurvivesACrashMidSave(t *testing.T) {
	n := 1000
	if testing.Short() {
		n = 100
	}
	const lanes = 4
	start := time.Now()
	type result struct {
		midWrite int
		err      error
	}
	results := make(chan result, lanes)
	for l := 0; l < lanes; l++ {
		dir := t.TempDir()
		go func() {
			mid, err := crashLoop(dir, n/lanes)
			results <- result{mid, err}
		}()
	}
	midWrite := 0
	for l := 0; l < lanes; l++ {
		r := <-results
		if r.err != nil {
			t.Error(r.err)
		}
		midWrite += r.midWrite
	}
	t.Logf("%d kills in %v; %d left a temporary file behind (killed mid-write)", n, time.Since(start).Round(time.Millisecond), midWrite)
	if midWrite == 0 {
		t.Errorf("no kill landed inside a write: the test proves nothing")
	}
}

// crashLoop saves version 0 in dir, then n times starts a child saving
// newer versions and kills it, checking the file after each kill. It
// returns how many kills left a temporary file (landed inside a write).
func crashLoop(dir string, n int) (midWrite int, err error) {
	s, err := NewChatStore(dir)
	if err != nil {
		return 0, err
	}
	id := crashChat(0).ID
	if err := s.Save(crashChat(0)); err != nil {
		return 0, err
	}
	for i := 0; i < n; i++ {
		cmd := exec.Command(os.Args[0], "-test.run=^TestChatStoreSaveChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		if err != nil {
			return midWrite, err
		}
		if err := cmd.Start(); err != nil {
			return midWrite, err
		}
		// The child says "saving" before its first save and "saved" after
		// it; the kill then comes at a random moment within about two
		// more saves, so it lands inside an encode or a write in whatever
		// proportion they take on this machine (-race and a loaded CI
		// machine make a save several times slower than a fixed window).
		r := bufio.NewReader(out)
		line, _ := r.ReadString('\n')
		t0 := time.Now()
		if line == "saving\n" {
			line, _ = r.ReadString('\n')
		}
		if line != "saved\n" {
			cmd.Process.Kill()
			cmd.Wait()
			return midWrite, fmt.Errorf("child said %q", line)
		}
		one := time.Since(t0)
		time.Sleep(time.Duration(rand.Int64N(int64(2*one) + 1)))
		cmd.Process.Kill()
		cmd.Wait()

		tmps, _ := filepath.Glob(filepath.Join(dir, ".*.tmp"))
		if len(tmps) > 0 {
			midWrite++
			for _, p := range tmps {
				os.Remove(p)
			}
		}
		c, err := s.Load(id)
		if err != nil {
			return midWrite, fmt.Errorf("%s, kill %d: %w", dir, i, err)
		}
		var v int
		if _, err := fmt.Sscanf(c.Title, "version %d", &v); err != nil || len(c.Messages) != 4 || c.Messages[3].Content != crashChat(v).Messages[3].Content {
			return midWrite, fmt.Errorf("%s, kill %d: read back %q with %d messages, not a whole version", dir, i, c.Title, len(c.Messages))
		}
		if _, damaged, err := s.List(); err != nil || len(damaged) > 0 {
			return midWrite, fmt.Errorf("%s, kill %d: List: %v, %+v", dir, i, err, damaged)
		}
	}
	return midWrite, nil
}

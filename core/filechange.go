package core

import (
	"errors"
	"fmt"
	"os"
	"runtime/debug"
)

// ErrModelFileChanged is wrapped by every error that says the loaded model's
// file was truncated, rewritten or became unreadable while it was mapped.
// The session is unusable afterwards: close it and load the file again.
var ErrModelFileChanged = errors.New("the model file changed on disk")

// FileChangedError says how the change was noticed.
type FileChangedError struct {
	Path   string
	Reason string // "it shrank from 1185376 to 4096 bytes", "reading its byte 70000 faulted", …
}

func (e *FileChangedError) Error() string {
	return fmt.Sprintf("%v: %s: %s; load it again", ErrModelFileChanged, e.Path, e.Reason)
}

func (e *FileChangedError) Unwrap() error { return ErrModelFileChanged }

// checkFile compares the file on disk with what was mapped, before a step
// reads the weights. The same file with another size or modification time
// is a change the mapping may already show (pages past a new end fault,
// rewritten pages hold other weights). A file removed or replaced by
// another (a rename over it) is no change: the mapping holds the old one.
func (s *Session) checkFile() error {
	if s.stamp == nil {
		return nil
	}
	now, err := os.Stat(s.file.Path)
	if err != nil || !os.SameFile(now, s.stamp) {
		return nil
	}
	switch {
	case now.Size() != s.stamp.Size():
		return &FileChangedError{Path: s.file.Path, Reason: fmt.Sprintf("it went from %d to %d bytes", s.stamp.Size(), now.Size())}
	case !now.ModTime().Equal(s.stamp.ModTime()):
		return &FileChangedError{Path: s.file.Path, Reason: fmt.Sprintf("it was rewritten at %s", now.ModTime().Format("15:04:05"))}
	}
	return nil
}

// guarded runs fn, which reads mapped weights, with faults turned into
// panics (the CPU pool raises its workers' on this goroutine), and turns a
// fault inside the mapping into a FileChangedError that also marks the
// session broken. Any other panic is raised again: it is a bug, not the
// file.
func (s *Session) guarded(fn func() error) (err error) {
	old := debug.SetPanicOnFault(true)
	defer func() {
		debug.SetPanicOnFault(old)
		r := recover()
		if r == nil {
			return
		}
		f, ok := r.(interface{ Addr() uintptr })
		if !ok {
			panic(r)
		}
		off, in := s.file.MappedOffset(f.Addr())
		if !in {
			panic(r)
		}
		s.broken = &FileChangedError{Path: s.file.Path, Reason: fmt.Sprintf("reading its byte %d faulted (the file is shorter or gone)", off)}
		err = s.broken
	}()
	return fn()
}

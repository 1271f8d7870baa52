//go:build !unix

package gguf

import (
	"fmt"
	"os"
)

// pageSize only shapes DropPages, which has no mapping to drop here.
var pageSize = 4096

// Open reads path into memory and parses its index. Platforms without the
// unix mmap call get this plain-read fallback.
func Open(path string) (*File, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	f, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	return f, nil
}

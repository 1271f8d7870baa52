// Command minfer is a desktop chat app for local LLMs in GGUF files, with
// its own inference runtime. With no arguments it opens the window; with a
// command it runs that command in the terminal (`minfer help`).
package main

import (
	"fmt"
	"os"

	"github.com/minfer/minfer/cli"
	"github.com/minfer/minfer/ui"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] == "gui" {
		var args []string
		if len(os.Args) > 2 {
			args = os.Args[2:]
		}
		if err := ui.Run(args); err != nil {
			fmt.Fprintf(os.Stderr, "minfer: %v\n", err)
			os.Exit(1)
		}
		return
	}
	// The GUI toolkit's inits (fyne's driver, systray) lock main.main to
	// the main thread. A command needs no window, and on a locked goroutine
	// every runtime.Gosched (the CPU backend's pool yields while it waits
	// for a helper) hands the P to another thread and back through futexes:
	// 8 % of a Q4_0 decode profile's samples (bench/results/
	// 2026-12-02-s9-cpu-repack). So a command runs on a goroutine of its own.
	code := make(chan int)
	go func() { code <- cli.Main(cli.DefaultEnv(), os.Args[1:]) }()
	os.Exit(<-code)
}

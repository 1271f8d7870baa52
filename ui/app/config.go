package app

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/devices"
)

// Prefs is the slice of fyne.Preferences the controller uses.
type Prefs interface {
	StringList(key string) []string
	SetStringList(key string, value []string)
}

// ConfigDirEnv points the conversation store and settings elsewhere (tests,
// portable installs).
const ConfigDirEnv = "MINFER_CONFIG_DIR"

// Config is what the controller needs from outside.
type Config struct {
	ConfigDir string                                                                                // "": $MINFER_CONFIG_DIR, else os.UserConfigDir()/minfer
	Device    func() devices.DeviceMemory                                                           // nil: devices.QueryGPU
	Env       func(string) (string, bool)                                                           // nil: os.LookupEnv (MINFER_GPU_MEM)
	Post      func(func())                                                                          // runs a function on the UI goroutine (fyne.Do)
	Prefs     Prefs                                                                                 // recent models; nil: not kept
	Threads   int                                                                                   // CPU threads for the model; 0: all
	Now       func() time.Time                                                                      // nil: time.Now
	Interval  time.Duration                                                                         // stream refresh; 0: streamInterval
	Load      func(context.Context, string, core.LoadOptions, core.Progress) (*core.Session, error) // nil: core.Load
	// TokenHook, when set, runs on the generating goroutine after each
	// streamed piece of a reply, with the reply's context: tests hold a
	// generation there (until a stop cancels it) to act while it runs.
	TokenHook func(context.Context)
}

// ResolveConfigDir applies Config.ConfigDir's rule.
func ResolveConfigDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if d := os.Getenv(ConfigDirEnv); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config folder for conversations (set %s): %w", ConfigDirEnv, err)
	}
	return filepath.Join(base, "minfer"), nil
}

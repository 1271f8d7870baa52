package app

import (
	"os"
	"path/filepath"
)

const recentKey = "recent_models"
const recentMax = 8

// RecentModel is one entry of the recent list.
type RecentModel struct {
	Path    string
	Missing bool
}

// Recent lists recent models, marking files that are gone.
func (c *Controller) Recent() []RecentModel {
	if c.cfg.Prefs == nil {
		return nil
	}
	var out []RecentModel
	for _, p := range c.cfg.Prefs.StringList(recentKey) {
		_, err := os.Stat(p)
		out = append(out, RecentModel{Path: p, Missing: err != nil})
	}
	return out
}

func (c *Controller) addRecent(path string) {
	if c.cfg.Prefs == nil {
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	c.cfg.Prefs.SetStringList(recentKey, recentFirst(path, c.cfg.Prefs.StringList(recentKey), func(p string) bool { return p == path }))
}

// recentFirst puts x before the entries of old that are not the same
// as it, keeping at most recentMax (the recent models and the saved
// servers).
func recentFirst[T any](x T, old []T, same func(T) bool) []T {
	list := []T{x}
	for _, o := range old {
		if !same(o) && len(list) < recentMax {
			list = append(list, o)
		}
	}
	return list
}

//go:build !linux

package ptytest

import (
	"errors"
	"os"
)

// Open fails: pseudo-terminals are opened on Linux only.
func Open() (master, slave *os.File, err error) {
	return nil, nil, errors.New("ptytest: pseudo-terminals are opened on Linux only")
}

// Flow fails, as Open does.
func Flow(*os.File, int) error { return errors.New("ptytest: Linux only") }

// Package ptytest opens pseudo-terminals for tests that need a console on
// a real terminal: one stopped with Ctrl-S, or one that must look like a
// person's. Linux only; Open fails elsewhere.
package ptytest

package app

import (
	"io/fs"

	"simpler.dev/log/internal/testkit/logtest"
)

func currentUmask() fs.FileMode {
	m := logtest.Umask(0)
	logtest.Umask(m)
	return fs.FileMode(m)
}

package strace

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
)

// ReadInput reads one input the way strace-timing takes its LOG
// arguments into p: "-" is stdin, a directory is every host.*.log in it
// (in name order), anything else a file.
func ReadInput(p *Parser, in string, stdin io.Reader) error {
	if in == "-" {
		return p.Read(stdin)
	}
	fi, err := os.Stat(in)
	if err != nil {
		return err
	}
	paths := []string{in}
	if fi.IsDir() {
		paths, err = filepath.Glob(filepath.Join(in, "host.*.log"))
		if err != nil {
			return err
		}
		if len(paths) == 0 {
			return fmt.Errorf("%s is a directory but holds no host.*.log files", in)
		}
		slices.Sort(paths)
	}
	for _, path := range paths {
		f, err := os.Open(path)
		if err != nil {
			return err
		}
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			// A guess from the size (a span record is ~300 bytes),
			// capped: a sparse or junk file must not reserve memory for
			// spans it does not hold. Past the cap, memory grows with
			// the spans actually read.
			p.grow(int(min(fi.Size()/300, 1<<16)))
		}
		err = p.Read(f)
		f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
	}
	return nil
}

// ReadHost reads one input as the logs of one host (see ReadInput), labelled
// after it: a directory's name, a file's directory's name, or for a file
// in the current directory its name; "stdin" for "-".
func ReadHost(in string, stdin io.Reader) (HostLog, error) {
	p := &Parser{}
	if err := ReadInput(p, in, stdin); err != nil {
		return HostLog{}, err
	}
	return HostLog{Label: hostLabel(in), Parser: p}, nil
}

func hostLabel(in string) string {
	if in == "-" {
		return "stdin"
	}
	clean := filepath.Clean(in)
	if fi, err := os.Stat(clean); err == nil && fi.IsDir() {
		return filepath.Base(clean)
	}
	if dir := filepath.Base(filepath.Dir(clean)); dir != "." && dir != string(filepath.Separator) {
		return dir
	}
	return filepath.Base(clean)
}

// A HostLog is what one host's logs held, with the label its processes
// carry.
type HostLog struct {
	Label  string
	Parser *Parser
}

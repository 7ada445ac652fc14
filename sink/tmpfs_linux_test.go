package sink

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/self"
)

// TestAnchorOnRealFullDisk is TestAnchorOnFullDisk on a real full disk: a
// small tmpfs, filled by a pad file and freed again while records are
// logged, run in a child process (the mount is the parent's). Every file
// starts with one whole header and holds only whole records, and records
// in the files + dropped = logged. Before, a header written on the full
// disk was left torn and the next write glued onto it.
func TestAnchorOnRealFullDisk(t *testing.T) {
	if dir := os.Getenv("SINK_TMPFS_DIR"); dir != "" {
		tmpfsChild(dir, os.Getenv("SINK_TMPFS_ROTATE") == "1")
		return
	}
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	for _, rotate := range []bool{false, true} {
		t.Run(fmt.Sprintf("rotate %v", rotate), func(t *testing.T) {
			mnt := t.TempDir()
			if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=512k", "tmpfs", mnt).CombinedOutput(); err != nil {
				t.Skipf("cannot mount a tmpfs: %v: %s", err, out)
			}
			t.Cleanup(func() { _ = exec.Command("umount", mnt).Run() })
			dir := filepath.Join(mnt, "d")
			cmd := self.Command("-test.run=^TestAnchorOnRealFullDisk$", "-test.count=1")
			cmd.Env = append(os.Environ(), "SINK_TMPFS_DIR="+dir, fmt.Sprintf("SINK_TMPFS_ROTATE=%d", map[bool]int{true: 1}[rotate]))
			out, err := cmd.Output()
			require.NoError(t, err, "%s", out)
			var logged, written, dropped, failed int
			_, err = fmt.Sscanf(lastLine(string(out)), "logged %d written %d dropped %d failed %d", &logged, &written, &dropped, &failed)
			require.NoError(t, err, "%s", out)
			recs := map[string]bool{}
			for i := range logged {
				recs[strings.TrimSuffix(string(rec(fmt.Sprintf("r%06d ", i), 300)), "\n")] = true
			}
			records, lines := checkFiles(t, dir, recs)
			assert.Equal(t, logged, records+dropped, "records in the files + dropped = logged")
			assert.Equal(t, failed, dropped)
			assert.Equal(t, lines, written, "written counts every line in the files, headers included")
			assert.Positive(t, failed, "the disk was full at times")
		})
	}
}

func lastLine(s string) string {
	ls := strings.Split(strings.TrimSpace(s), "\n")
	return ls[len(ls)-1]
}

// tmpfsChild logs rounds of records into dir, the disk filled by a pad
// file for the first half of each round, and prints the accounting.
func tmpfsChild(dir string, rotate bool) {
	n := 0
	s := newTest(&testOptions{PID: rotPID, FileHeader: func(dst []byte) []byte {
		n++
		return fmt.Appendf(dst, "HEADER %d %s\n", n, strings.Repeat(".", 150))
	}})
	if rotate {
		_ = s.SetRotation(Rotation{MaxSize: minRotateSize})
	}
	if err := s.BindDir(dir); err != nil {
		fmt.Println(err)
		os.Exit(2)
	}
	logged := 0
	chunk := make([]byte, 4096)
	rounds := 8
	if rotate {
		rounds = 24
	}
	for round := range rounds {
		pad, err := os.Create(filepath.Join(dir, "pad"))
		if err != nil {
			fmt.Println(err)
			os.Exit(2)
		}
		for size := 4096 >> (round % 6); ; {
			if _, err := pad.Write(chunk[:size]); errors.Is(err, syscall.ENOSPC) {
				if size == 1 {
					break
				}
				size /= 2
			}
		}
		for range 30 {
			_ = put(s, rec(fmt.Sprintf("r%06d ", logged), 300))
			logged++
		}
		pad.Close()
		os.Remove(filepath.Join(dir, "pad"))
		for range 30 {
			_ = put(s, rec(fmt.Sprintf("r%06d ", logged), 300))
			logged++
		}
	}
	_ = s.Close()
	c := s.Counts()
	fmt.Printf("logged %d written %d dropped %d failed %d\n", logged, c.Written, c.Dropped, c.OutputFailed)
	os.Exit(0)
}

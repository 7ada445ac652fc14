package strace_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"simpler.dev/log/internal/testkit/logtest"
	"strconv"
	"strings"
	"time"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// Reading back the log directory a State wrote, as strace-timing reads
// its LOG argument: Inputs lists the files (the rotated ones in order,
// then the current one), RotationGaps says that retention removed the
// start of the set, and ReadHost reads them all as one host's log.
func ExampleReadHost() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	// Files of 64 KiB, one rotated file kept: 350 records of about 470
	// bytes rotate twice, and the first rotated file is removed.
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{
		Dir:      dir,
		Level:    levels.Info,
		Rotation: sink.Rotation{MaxSize: 64 << 10, MaxFiles: 1},
	})
	log := slog.New(st.Handler())
	pad := strings.Repeat("x", 350)
	for i := range 350 {
		log.Info("job done", "job", i, "pad", pad)
	}
	ctx, inv := spanattr.NewInvocation(spanattr.WithLogger(context.Background(), log), 0x9f2c)
	_, sp := spanattr.Start(ctx, "chip.run")
	sp.End()
	inv.End()
	st.Close()

	// The pid and the directory change from run to run.
	masked := strings.NewReplacer(dir, "<dir>", strconv.Itoa(os.Getpid()), "<pid>")
	paths, err := strace.Inputs(dir)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, p := range paths {
		fmt.Println(masked.Replace(filepath.Base(p)))
	}
	for _, gap := range strace.RotationGaps(paths) {
		fmt.Println(masked.Replace(gap))
	}

	h, err := strace.ReadHost(nil, dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("label is the directory's name:", h.Label == filepath.Base(dir))
	fmt.Println("anchors (one a file):", len(h.Parser.Anchors))
	fmt.Println("drop reports:", len(h.Parser.Drops))
	for _, s := range h.Parser.Spans {
		fmt.Printf("span %s hid=%s depth=%d, of the invocation: %v\n", s.Name, s.HID, s.Depth, s.Inv == inv.ID())
	}
	// Output:
	// host.<pid>.00000002.log
	// host.<pid>.log
	// the log set <dir>/host.<pid>.*.log starts at host.<pid>.00000002.log: 1 earlier rotated file(s) are not here (removed by retention?), so what follows is read from part of its log
	// label is the directory's name: true
	// anchors (one a file): 2
	// drop reports: 0
	// span chip.run hid=9f2c depth=0, of the invocation: true
}

// Following the directory a running service writes, as strace-timing
// --follow does: each Poll gives EachSpan the spans written since the
// last, through the rotation and compression the sink does meanwhile.
func ExampleFollower() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	counts := map[string]int{}
	f := strace.NewFollower(&strace.Parser{ReadOptions: strace.ReadOptions{EachSpan: func(s *strace.Span) { counts[s.Name]++ }}}, dir)

	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{
		Dir:      dir,
		Level:    levels.Timing,
		Rotation: sink.Rotation{MaxSize: 64 << 10, Compress: true},
	})
	st.Start()
	ctx := spanattr.WithLogger(context.Background(), slog.New(st.Handler()))
	for round := range 3 {
		for range 400 { // about 80 KiB: a rotation a round
			_, sp := spanattr.Start(ctx, "db.query")
			sp.End()
		}
		st.Flush(logtest.Within(time.Minute)) // the spans in the file before the Poll
		if err := f.Poll(); err != nil {
			fmt.Println(err)
		}
		fmt.Printf("after round %d: %d\n", round+1, counts["db.query"])
	}
	st.Close()
	// Output:
	// after round 1: 400
	// after round 2: 800
	// after round 3: 1200
}

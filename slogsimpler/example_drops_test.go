package slogsimpler_test

import (
	"fmt"
	"log/slog"
	"os"

	"simpler.dev/log/slogsimpler"
)

func ExampleState_Counts() {
	dir, _ := os.MkdirTemp("", "example")
	defer os.RemoveAll(dir)
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Dir: dir})
	st.Start()
	log := slog.New(st.Handler())
	for i := range 3 {
		log.Error("disk full", "try", i)
	}
	st.Close()
	log.Error("after close") // counted, not written
	c := st.Counts()
	fmt.Printf("written=%d dropped=%d not_admitted=%d pending=%d\n", c.Written, c.Dropped, c.NotAdmitted, c.Pending)
	// Output:
	// written=4 dropped=1 not_admitted=1 pending=0
}

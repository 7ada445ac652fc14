package devicebridge_test

import (
	"fmt"
	"os"
	"time"

	"simpler.dev/log/devicebridge"
	"simpler.dev/log/levels"
)

func ExampleAppendLine() {
	t := time.Date(2026, 6, 1, 10, 0, 0, 123456000, time.Local)
	line := devicebridge.AppendLine(nil, "AICPU", 4711, "python3", t,
		devicebridge.CANNWarning, true, "kernel.cpp", 88, 4712, "run", `"step done"`)
	os.Stdout.Write(line)
	fmt.Println(levels.CANN(levels.Timing), levels.CANN(levels.Nul))
	// Output:
	// [WARNING] AICPU(4711,python3):2026-06-01-10:00:00.123.456 [kernel.cpp:88]4712 run [TIMING] "step done"
	// 2 4
}

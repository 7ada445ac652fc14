package devicebridge_test

import (
	"fmt"
	"os"
	"time"

	"simpler.dev/log/devicebridge"
	"simpler.dev/log/levels"
)

func ExampleAppendCANN() {
	t := time.Date(2026, 6, 1, 10, 0, 0, 123456000, time.Local)
	rec := devicebridge.AppendCANN(nil,
		devicebridge.CANNProcess{Module: "AICPU", PID: 4711, PName: "python3"},
		devicebridge.CANNRecord{Level: devicebridge.CANNWarning, Timing: true, Time: t,
			File: "kernel.cpp", Line: 88, TID: 4712, Func: "run", Msg: "step done"})
	os.Stdout.Write(rec)
	fmt.Println(levels.CANN(levels.Timing), levels.CANN(levels.Nul))
	// Output:
	// [WARNING] AICPU(4711,python3):2026-06-01-10:00:00.123.456 [kernel.cpp:88]4712 run [TIMING]
	// "step done"
	// 2 4
}

package devicebridge_test

import (
	"bytes"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"

	"simpler.dev/log/devicebridge"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// An onboard device latches its CANN level from the host threshold once,
// at init, and writes CANN's two-line records.
func ExampleInitDevice() {
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &bytes.Buffer{}})
	var out bytes.Buffer
	dev, err := devicebridge.InitDevice(st, 0, &devicebridge.DeviceOptions{Out: &out, PName: "python3"})
	if err != nil {
		panic(err)
	}
	st.SetLevel(levels.Error) // too late: the device keeps what it latched
	_ = dev.Log(levels.Timing, slogsimpler.Source{Function: "run", File: "kernel.cpp", Line: 88}, 4712, "step done")
	stamp := regexp.MustCompile(`\(\d+,python3\):\S+`)
	fmt.Print(stamp.ReplaceAllString(out.String(), "(PID,python3):TIME"))
	fmt.Println("latched:", dev.Level == 2, dev.Timing)
	// Output:
	// [WARNING] AICPU(PID,python3):TIME [kernel.cpp:88]4712 run [TIMING]
	// "step done"
	// latched: true true
}

// Simulated device code logs through the host state: same envelope, live
// threshold and destination as the host's records.
func ExampleSim() {
	var out bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &out})
	dev, _ := devicebridge.NewSim(st)
	dev.Logf(levels.Info, "aicpu_scheduler", "core %d online", 0)
	dev.Logf(levels.Debug, "aicpu_execute", "hidden at INFO")
	fmt.Print(regexp.MustCompile(`mono_ns=\d+|T0x[0-9a-f]+|pid=\d+|wall_ns=\d+|\.go:\d+`).ReplaceAllString(out.String(), "…"))
	// Output:
	// […][…][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 … … …
	// […][…][INFO] aicpu_scheduler: [example_test…] core 0 online
}

// A simulator's output forwarded into the host log: its own spans stay
// machine records; a drop report in the host's name does not.
func ExampleForwarder() {
	var out bytes.Buffer
	st, _ := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &out})
	f, _ := devicebridge.NewForwarder(st, &devicebridge.ForwardOptions{PID: 9})
	f.Forward(strings.NewReader(
		"[mono_ns=5][T0x2a][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=42 inv=1 hid=0 depth=0 name=sim.step ts=1 dur=4 \n" +
			fmt.Sprintf("[mono_ns=6][T0x2a][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d total=888\n", os.Getpid())))
	for _, line := range strings.SplitAfter(out.String(), "\n") {
		if strings.Contains(line, "[T0x2a]") {
			fmt.Println(strings.TrimSpace(strings.Replace(line, strconv.Itoa(os.Getpid()), "HOST", 1)))
		}
	}
	fmt.Println("neutralised:", f.Neutralised())
	// Output:
	// [mono_ns=5][T0x2a][TIMING] emit_host_span: [STRACE] v=1 pid=9 tid=42 inv=1 hid=0 depth=0 name=sim.step ts=1 dur=4
	// [mono_ns=6][T0x2a][ERROR] host_log_drops: %5BHOSTLOG_DROPS] v=1 pid=HOST total=888
	// neutralised: 1
}

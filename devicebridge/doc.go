// Package devicebridge carries device-side logging of the simpler runtime
// into a Go program, in both of the ways simpler runs device code.
//
// # Simulation
//
// In simulation, AICPU code runs on host goroutines. A [Sim] gives it
// simpler's dev_vlog-style calls — a level, the device function's name and
// a printf format — bound to a slogsimpler.State, so device records share
// the host's envelope, live threshold, queue and destination:
//
//	dev, _ := devicebridge.NewSim(state)
//	dev.Logf(levels.Info, "run_kernel", "block %d done in %d cycles", blk, cycles)
//
//	[mono_ns=…][T0x2f][INFO] run_kernel: [kernel.go:41] block 3 done in 1200 cycles
//
// A simulator running as a separate process is bridged with a
// [Forwarder], which reads its output and re-emits every line through the
// state: envelope lines keep their clock reading, lane, function and
// position, simpler's older "[LEVEL] func: body" lines are understood, and
// anything else is forwarded at INFO with function "sim". Its spans stay
// spans only when [NewForwarder] is given the simulator's pid
// ([ForwardOptions].PID); a Forwarder without one writes every line as
// user text, markers neutralised.
//
// # On the device (CANN)
//
// On real silicon device code logs through CANN, whose level is fixed once
// when the device is initialised. [InitDevice] latches it: if
// ASCEND_GLOBAL_LOG_LEVEL is present in the environment, even empty, the
// environment wins and the bridge sets nothing; otherwise the host
// threshold maps through CANN's table (DEBUG 0, INFO 1, TIMING and WARN 2,
// ERROR 3, NUL 4), with a TIMING flag on when the host threshold admits
// TIMING. Nothing the host does afterwards changes a latched device.
//
// A [Device] writes CANN-format records, each two lines (as simpler's
// onboard code hands them to dlog: the header, then the quoted message):
//
//	[WARNING] AICPU(4711,python3):2026-06-01-10:00:00.123.456 [kernel.cpp:88]4712 run [TIMING]
//	"step done"
//
// to standard output when ASCEND_LOG_PRINT_TO_STDOUT=1, else to a plog-style
// file under ASCEND_PROCESS_LOG_PATH, $ASCEND_WORK_PATH/log or
// $HOME/ascend/log, rotated at 20 MiB keeping 10 files.
package devicebridge

// Package self runs this test binary again as a child process (a test
// that needs a signal, an exit, a descriptor limit or a standard stream of
// its own), through the emulator the tests themselves run under.
//
// make test-arm runs the tests of 32-bit ARM under qemu-arm (go test
// -exec qemu-arm). The kernel cannot run an ARM binary on its own there,
// so a child started from os.Args[0] would fail with "exec format error":
// the target sets SIMPLER_TEST_EXEC to the emulator, and every child
// started through this package runs through it too. Unset (make test),
// the binary runs directly.
package self

import (
	"context"
	"os"
	"os/exec"
)

// EnvExec names the environment variable holding the emulator (a command
// on PATH, or a path) that runs this test binary and its children.
const EnvExec = "SIMPLER_TEST_EXEC"

// Argv returns the path and the argument list (argv[0] included) that
// os.StartProcess takes to run this test binary with args.
func Argv(args ...string) (path string, argv []string) {
	exe := os.Args[0]
	emu := os.Getenv(EnvExec)
	if emu == "" {
		return exe, append([]string{exe}, args...)
	}
	if p, err := exec.LookPath(emu); err == nil {
		emu = p
	}
	return emu, append([]string{emu, exe}, args...)
}

// Command is exec.Command for this test binary with args.
func Command(args ...string) *exec.Cmd {
	return CommandContext(context.Background(), args...)
}

// CommandContext is exec.CommandContext for this test binary with args.
func CommandContext(ctx context.Context, args ...string) *exec.Cmd {
	path, argv := Argv(args...)
	return exec.CommandContext(ctx, path, argv[1:]...)
}

// Emulated reports whether the tests run under an emulator (EnvExec set),
// for a test that needs what the emulator does not pass to the kernel
// (qemu-user answers TIOCGDEV with ENOSYS, so a terminal cannot be
// reopened under it) to skip saying so.
func Emulated() bool { return os.Getenv(EnvExec) != "" }

// Fanout wires a console and the simpler log file by hand, each with its
// own level, the way Setup does it for you: DEBUG and above into the file,
// WARN and above on the console. A third, deliberately broken handler
// shows that one failing destination neither stops the others nor crashes
// the program: the failure is counted and reported in the file.
//
//	go run ./examples/fanout [-dir DIR]
package main

// Httpserver is a small net/http service logging through slogsimpler:
// every request is an invocation with a span, request attributes are
// logged, and SIGINT or SIGTERM shuts it down cleanly, draining the log.
//
//	go run ./examples/httpserver [-addr 127.0.0.1:8080] [-dir DIR]
//	curl localhost:8080/items/7
package main
